"""plylog's API: the generated code of each proto package (`plylog.v1`)."""
