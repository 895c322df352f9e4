import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from plylog.v1 import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ErrorReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_REASON_UNSPECIFIED: _ClassVar[ErrorReason]
    GAME_NOT_FOUND: _ClassVar[ErrorReason]
    INVALID_RULES: _ClassVar[ErrorReason]
    INVALID_SEATS: _ClassVar[ErrorReason]
    INVALID_REQUEST: _ClassVar[ErrorReason]
    OUT_OF_BOUNDS: _ClassVar[ErrorReason]
    WRONG_MOVE_KIND: _ClassVar[ErrorReason]
    CELL_OCCUPIED: _ClassVar[ErrorReason]
    COLUMN_FULL: _ClassVar[ErrorReason]
    NOT_YOUR_TURN: _ClassVar[ErrorReason]
    GAME_OVER: _ClassVar[ErrorReason]
    NOTHING_TO_UNDO: _ClassVar[ErrorReason]
    SEQUENCE_MISMATCH: _ClassVar[ErrorReason]
    GAME_EXISTS: _ClassVar[ErrorReason]
    REQUEST_ID_REUSED: _ClassVar[ErrorReason]
    SEQUENCE_OUT_OF_RANGE: _ClassVar[ErrorReason]
    OVERLOADED: _ClassVar[ErrorReason]
    SHUTTING_DOWN: _ClassVar[ErrorReason]
    INTERNAL_ERROR: _ClassVar[ErrorReason]
    INVALID_PAGE_TOKEN: _ClassVar[ErrorReason]
    NO_FLIP: _ClassVar[ErrorReason]
    COLUMN_EMPTY: _ClassVar[ErrorReason]
    NOT_YOUR_DISC: _ClassVar[ErrorReason]
    UNDO_DISABLED: _ClassVar[ErrorReason]
    NOT_LAST_MOVER: _ClassVar[ErrorReason]
    SEAT_TOKEN_REQUIRED: _ClassVar[ErrorReason]
    SEAT_TOKEN_INVALID: _ClassVar[ErrorReason]
    API_KEY_REQUIRED: _ClassVar[ErrorReason]
    API_KEY_INVALID: _ClassVar[ErrorReason]
    LIMIT_REACHED: _ClassVar[ErrorReason]
    REQUEST_TOO_LARGE: _ClassVar[ErrorReason]
    STORE_UNAVAILABLE: _ClassVar[ErrorReason]
    NO_SEAT_TOKENS: _ClassVar[ErrorReason]
    SEAT_TOKEN_SECRET_MISSING: _ClassVar[ErrorReason]
    API_KEY_NOT_CONFIGURED: _ClassVar[ErrorReason]
    SWAP_NOT_ALLOWED: _ClassVar[ErrorReason]
    NOTHING_TO_REDO: _ClassVar[ErrorReason]
    CONSENT_REQUIRED: _ClassVar[ErrorReason]
    TAKEBACK_NOT_ALLOWED: _ClassVar[ErrorReason]
    NO_PENDING_OFFER: _ClassVar[ErrorReason]
    ALREADY_AGREED: _ClassVar[ErrorReason]
    ABORT_TOO_LATE: _ClassVar[ErrorReason]
    SEAT_OUT: _ClassVar[ErrorReason]
    TIME_EXPIRED: _ClassVar[ErrorReason]
    INVALID_TIME_CONTROL: _ClassVar[ErrorReason]
    REMATCH_PENDING: _ClassVar[ErrorReason]
    PRESENCE_UNAVAILABLE: _ClassVar[ErrorReason]
    SEAT_IS_BOT: _ClassVar[ErrorReason]
    ENGINE_UNSUPPORTED: _ClassVar[ErrorReason]
    ANALYSIS_BUDGET_EXHAUSTED: _ClassVar[ErrorReason]
    APPEND_CONTENDED: _ClassVar[ErrorReason]
    LOG_CORRUPT: _ClassVar[ErrorReason]
    NOT_OWNER: _ClassVar[ErrorReason]
    ILLEGAL_MOVE: _ClassVar[ErrorReason]
    AMBIGUOUS_MOVE: _ClassVar[ErrorReason]
    NO_DRAW_CLAIM: _ClassVar[ErrorReason]
    INVALID_MOVE_TEXT: _ClassVar[ErrorReason]

class GameView(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GAME_VIEW_UNSPECIFIED: _ClassVar[GameView]
    GAME_VIEW_BASIC: _ClassVar[GameView]
    GAME_VIEW_FULL: _ClassVar[GameView]

class Action(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTION_UNSPECIFIED: _ClassVar[Action]
    ACTION_RESIGN: _ClassVar[Action]
    ACTION_ABORT: _ClassVar[Action]
    ACTION_OFFER_DRAW: _ClassVar[Action]
    ACTION_ACCEPT_DRAW: _ClassVar[Action]
    ACTION_DECLINE_DRAW: _ClassVar[Action]
    ACTION_REQUEST_TAKEBACK: _ClassVar[Action]
    ACTION_ACCEPT_TAKEBACK: _ClassVar[Action]
    ACTION_DECLINE_TAKEBACK: _ClassVar[Action]
    ACTION_CLAIM_DRAW: _ClassVar[Action]

class Lifecycle(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LIFECYCLE_UNSPECIFIED: _ClassVar[Lifecycle]
    LIFECYCLE_CREATED: _ClassVar[Lifecycle]
    LIFECYCLE_ROUND_STARTED: _ClassVar[Lifecycle]
    LIFECYCLE_SEAT_OUT: _ClassVar[Lifecycle]
    LIFECYCLE_ENDED: _ClassVar[Lifecycle]
    LIFECYCLE_REOPENED: _ClassVar[Lifecycle]
ERROR_REASON_UNSPECIFIED: ErrorReason
GAME_NOT_FOUND: ErrorReason
INVALID_RULES: ErrorReason
INVALID_SEATS: ErrorReason
INVALID_REQUEST: ErrorReason
OUT_OF_BOUNDS: ErrorReason
WRONG_MOVE_KIND: ErrorReason
CELL_OCCUPIED: ErrorReason
COLUMN_FULL: ErrorReason
NOT_YOUR_TURN: ErrorReason
GAME_OVER: ErrorReason
NOTHING_TO_UNDO: ErrorReason
SEQUENCE_MISMATCH: ErrorReason
GAME_EXISTS: ErrorReason
REQUEST_ID_REUSED: ErrorReason
SEQUENCE_OUT_OF_RANGE: ErrorReason
OVERLOADED: ErrorReason
SHUTTING_DOWN: ErrorReason
INTERNAL_ERROR: ErrorReason
INVALID_PAGE_TOKEN: ErrorReason
NO_FLIP: ErrorReason
COLUMN_EMPTY: ErrorReason
NOT_YOUR_DISC: ErrorReason
UNDO_DISABLED: ErrorReason
NOT_LAST_MOVER: ErrorReason
SEAT_TOKEN_REQUIRED: ErrorReason
SEAT_TOKEN_INVALID: ErrorReason
API_KEY_REQUIRED: ErrorReason
API_KEY_INVALID: ErrorReason
LIMIT_REACHED: ErrorReason
REQUEST_TOO_LARGE: ErrorReason
STORE_UNAVAILABLE: ErrorReason
NO_SEAT_TOKENS: ErrorReason
SEAT_TOKEN_SECRET_MISSING: ErrorReason
API_KEY_NOT_CONFIGURED: ErrorReason
SWAP_NOT_ALLOWED: ErrorReason
NOTHING_TO_REDO: ErrorReason
CONSENT_REQUIRED: ErrorReason
TAKEBACK_NOT_ALLOWED: ErrorReason
NO_PENDING_OFFER: ErrorReason
ALREADY_AGREED: ErrorReason
ABORT_TOO_LATE: ErrorReason
SEAT_OUT: ErrorReason
TIME_EXPIRED: ErrorReason
INVALID_TIME_CONTROL: ErrorReason
REMATCH_PENDING: ErrorReason
PRESENCE_UNAVAILABLE: ErrorReason
SEAT_IS_BOT: ErrorReason
ENGINE_UNSUPPORTED: ErrorReason
ANALYSIS_BUDGET_EXHAUSTED: ErrorReason
APPEND_CONTENDED: ErrorReason
LOG_CORRUPT: ErrorReason
NOT_OWNER: ErrorReason
ILLEGAL_MOVE: ErrorReason
AMBIGUOUS_MOVE: ErrorReason
NO_DRAW_CLAIM: ErrorReason
INVALID_MOVE_TEXT: ErrorReason
GAME_VIEW_UNSPECIFIED: GameView
GAME_VIEW_BASIC: GameView
GAME_VIEW_FULL: GameView
ACTION_UNSPECIFIED: Action
ACTION_RESIGN: Action
ACTION_ABORT: Action
ACTION_OFFER_DRAW: Action
ACTION_ACCEPT_DRAW: Action
ACTION_DECLINE_DRAW: Action
ACTION_REQUEST_TAKEBACK: Action
ACTION_ACCEPT_TAKEBACK: Action
ACTION_DECLINE_TAKEBACK: Action
ACTION_CLAIM_DRAW: Action
LIFECYCLE_UNSPECIFIED: Lifecycle
LIFECYCLE_CREATED: Lifecycle
LIFECYCLE_ROUND_STARTED: Lifecycle
LIFECYCLE_SEAT_OUT: Lifecycle
LIFECYCLE_ENDED: Lifecycle
LIFECYCLE_REOPENED: Lifecycle

class CreateGameRequest(_message.Message):
    __slots__ = ("request_id", "game_id", "rules", "seats", "undo_policy", "time_control", "absence", "matched_at", "labels", "clocks_start_at")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    UNDO_POLICY_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    ABSENCE_FIELD_NUMBER: _ClassVar[int]
    MATCHED_AT_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    CLOCKS_START_AT_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    game_id: str
    rules: _game_pb2.RuleSet
    seats: _containers.RepeatedCompositeFieldContainer[_game_pb2.Seat]
    undo_policy: _game_pb2.UndoPolicy
    time_control: _game_pb2.TimeControl
    absence: _game_pb2.AbsencePolicy
    matched_at: _timestamp_pb2.Timestamp
    labels: _containers.ScalarMap[str, str]
    clocks_start_at: _timestamp_pb2.Timestamp
    def __init__(self, request_id: _Optional[str] = ..., game_id: _Optional[str] = ..., rules: _Optional[_Union[_game_pb2.RuleSet, _Mapping]] = ..., seats: _Optional[_Iterable[_Union[_game_pb2.Seat, _Mapping]]] = ..., undo_policy: _Optional[_Union[_game_pb2.UndoPolicy, str]] = ..., time_control: _Optional[_Union[_game_pb2.TimeControl, _Mapping]] = ..., absence: _Optional[_Union[_game_pb2.AbsencePolicy, _Mapping]] = ..., matched_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., labels: _Optional[_Mapping[str, str]] = ..., clocks_start_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateGamesRequest(_message.Message):
    __slots__ = ("requests", "clocks_start_at")
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    CLOCKS_START_AT_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.RepeatedCompositeFieldContainer[CreateGameRequest]
    clocks_start_at: _timestamp_pb2.Timestamp
    def __init__(self, requests: _Optional[_Iterable[_Union[CreateGameRequest, _Mapping]]] = ..., clocks_start_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateGamesResponse(_message.Message):
    __slots__ = ("responses",)
    RESPONSES_FIELD_NUMBER: _ClassVar[int]
    responses: _containers.RepeatedCompositeFieldContainer[CreateGameResponse]
    def __init__(self, responses: _Optional[_Iterable[_Union[CreateGameResponse, _Mapping]]] = ...) -> None: ...

class CreateGameResponse(_message.Message):
    __slots__ = ("game", "seat_tokens")
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    game: _game_pb2.Game
    seat_tokens: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, game: _Optional[_Union[_game_pb2.Game, _Mapping]] = ..., seat_tokens: _Optional[_Iterable[str]] = ...) -> None: ...

class GetGameRequest(_message.Message):
    __slots__ = ("game_id", "at_sequence")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    AT_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    at_sequence: int
    def __init__(self, game_id: _Optional[str] = ..., at_sequence: _Optional[int] = ...) -> None: ...

class GetGameResponse(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: _game_pb2.Game
    def __init__(self, game: _Optional[_Union[_game_pb2.Game, _Mapping]] = ...) -> None: ...

class ListGamesRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "order_by", "filter")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ORDER_BY_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    order_by: str
    filter: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., order_by: _Optional[str] = ..., filter: _Optional[str] = ...) -> None: ...

class GameSummary(_message.Message):
    __slots__ = ("game_id", "rules", "seats", "status", "last_sequence", "created_at", "updated_at", "labels")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    rules: _game_pb2.RuleSet
    seats: _containers.RepeatedCompositeFieldContainer[_game_pb2.Seat]
    status: _game_pb2.GameStatus
    last_sequence: int
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    labels: _containers.ScalarMap[str, str]
    def __init__(self, game_id: _Optional[str] = ..., rules: _Optional[_Union[_game_pb2.RuleSet, _Mapping]] = ..., seats: _Optional[_Iterable[_Union[_game_pb2.Seat, _Mapping]]] = ..., status: _Optional[_Union[_game_pb2.GameStatus, str]] = ..., last_sequence: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., labels: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ListGamesResponse(_message.Message):
    __slots__ = ("games", "next_page_token")
    GAMES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    games: _containers.RepeatedCompositeFieldContainer[GameSummary]
    next_page_token: str
    def __init__(self, games: _Optional[_Iterable[_Union[GameSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class SubmitMoveRequest(_message.Message):
    __slots__ = ("game_id", "seat", "move", "request_id", "expected_sequence", "view")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    move: _game_pb2.Move
    request_id: str
    expected_sequence: int
    view: GameView
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., move: _Optional[_Union[_game_pb2.Move, _Mapping]] = ..., request_id: _Optional[str] = ..., expected_sequence: _Optional[int] = ..., view: _Optional[_Union[GameView, str]] = ...) -> None: ...

class SubmitMoveResponse(_message.Message):
    __slots__ = ("events", "game")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.GameEvent]
    game: _game_pb2.Game
    def __init__(self, events: _Optional[_Iterable[_Union[_game_pb2.GameEvent, _Mapping]]] = ..., game: _Optional[_Union[_game_pb2.Game, _Mapping]] = ...) -> None: ...

class UndoRequest(_message.Message):
    __slots__ = ("game_id", "seat", "request_id", "expected_sequence", "view")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    request_id: str
    expected_sequence: int
    view: GameView
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., request_id: _Optional[str] = ..., expected_sequence: _Optional[int] = ..., view: _Optional[_Union[GameView, str]] = ...) -> None: ...

class UndoResponse(_message.Message):
    __slots__ = ("events", "game")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.GameEvent]
    game: _game_pb2.Game
    def __init__(self, events: _Optional[_Iterable[_Union[_game_pb2.GameEvent, _Mapping]]] = ..., game: _Optional[_Union[_game_pb2.Game, _Mapping]] = ...) -> None: ...

class RedoRequest(_message.Message):
    __slots__ = ("game_id", "seat", "request_id", "expected_sequence", "view")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    request_id: str
    expected_sequence: int
    view: GameView
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., request_id: _Optional[str] = ..., expected_sequence: _Optional[int] = ..., view: _Optional[_Union[GameView, str]] = ...) -> None: ...

class RedoResponse(_message.Message):
    __slots__ = ("events", "game")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.GameEvent]
    game: _game_pb2.Game
    def __init__(self, events: _Optional[_Iterable[_Union[_game_pb2.GameEvent, _Mapping]]] = ..., game: _Optional[_Union[_game_pb2.Game, _Mapping]] = ...) -> None: ...

class SubmitActionRequest(_message.Message):
    __slots__ = ("game_id", "seat", "action", "request_id", "expected_sequence", "view")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    action: Action
    request_id: str
    expected_sequence: int
    view: GameView
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., action: _Optional[_Union[Action, str]] = ..., request_id: _Optional[str] = ..., expected_sequence: _Optional[int] = ..., view: _Optional[_Union[GameView, str]] = ...) -> None: ...

class SubmitActionResponse(_message.Message):
    __slots__ = ("events", "game")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.GameEvent]
    game: _game_pb2.Game
    def __init__(self, events: _Optional[_Iterable[_Union[_game_pb2.GameEvent, _Mapping]]] = ..., game: _Optional[_Union[_game_pb2.Game, _Mapping]] = ...) -> None: ...

class RematchRequest(_message.Message):
    __slots__ = ("game_id", "seat", "rotate", "request_id", "expected_sequence", "view")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ROTATE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    rotate: bool
    request_id: str
    expected_sequence: int
    view: GameView
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., rotate: _Optional[bool] = ..., request_id: _Optional[str] = ..., expected_sequence: _Optional[int] = ..., view: _Optional[_Union[GameView, str]] = ...) -> None: ...

class RematchResponse(_message.Message):
    __slots__ = ("events", "game")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.GameEvent]
    game: _game_pb2.Game
    def __init__(self, events: _Optional[_Iterable[_Union[_game_pb2.GameEvent, _Mapping]]] = ..., game: _Optional[_Union[_game_pb2.Game, _Mapping]] = ...) -> None: ...

class ReissueSeatTokenRequest(_message.Message):
    __slots__ = ("game_id", "seat", "request_id")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    request_id: str
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., request_id: _Optional[str] = ...) -> None: ...

class ReissueSeatTokenResponse(_message.Message):
    __slots__ = ("events", "game", "seat_token")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.GameEvent]
    game: _game_pb2.Game
    seat_token: str
    def __init__(self, events: _Optional[_Iterable[_Union[_game_pb2.GameEvent, _Mapping]]] = ..., game: _Optional[_Union[_game_pb2.Game, _Mapping]] = ..., seat_token: _Optional[str] = ...) -> None: ...

class StreamEventsRequest(_message.Message):
    __slots__ = ("game_id", "from_sequence", "follow", "round")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    FOLLOW_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    from_sequence: int
    follow: bool
    round: int
    def __init__(self, game_id: _Optional[str] = ..., from_sequence: _Optional[int] = ..., follow: _Optional[bool] = ..., round: _Optional[int] = ...) -> None: ...

class CaughtUp(_message.Message):
    __slots__ = ("sequence",)
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    def __init__(self, sequence: _Optional[int] = ...) -> None: ...

class Heartbeat(_message.Message):
    __slots__ = ("sequence", "sent_at")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    SENT_AT_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    sent_at: _timestamp_pb2.Timestamp
    def __init__(self, sequence: _Optional[int] = ..., sent_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class StreamEventsResponse(_message.Message):
    __slots__ = ("event", "caught_up", "heartbeat")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    CAUGHT_UP_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    event: _game_pb2.GameEvent
    caught_up: CaughtUp
    heartbeat: Heartbeat
    def __init__(self, event: _Optional[_Union[_game_pb2.GameEvent, _Mapping]] = ..., caught_up: _Optional[_Union[CaughtUp, _Mapping]] = ..., heartbeat: _Optional[_Union[Heartbeat, _Mapping]] = ...) -> None: ...

class StreamAllEventsRequest(_message.Message):
    __slots__ = ("after", "follow", "event_types", "checkpoint_interval", "lifecycle_only", "filter", "from_end")
    AFTER_FIELD_NUMBER: _ClassVar[int]
    FOLLOW_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_INTERVAL_FIELD_NUMBER: _ClassVar[int]
    LIFECYCLE_ONLY_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    FROM_END_FIELD_NUMBER: _ClassVar[int]
    after: _containers.RepeatedScalarFieldContainer[int]
    follow: bool
    event_types: _containers.RepeatedScalarFieldContainer[str]
    checkpoint_interval: int
    lifecycle_only: bool
    filter: str
    from_end: bool
    def __init__(self, after: _Optional[_Iterable[int]] = ..., follow: _Optional[bool] = ..., event_types: _Optional[_Iterable[str]] = ..., checkpoint_interval: _Optional[int] = ..., lifecycle_only: _Optional[bool] = ..., filter: _Optional[str] = ..., from_end: _Optional[bool] = ...) -> None: ...

class FeedEvent(_message.Message):
    __slots__ = ("cell", "position", "event", "lifecycle", "player_ids", "outcome")
    CELL_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    LIFECYCLE_FIELD_NUMBER: _ClassVar[int]
    PLAYER_IDS_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    cell: int
    position: int
    event: _game_pb2.GameEvent
    lifecycle: Lifecycle
    player_ids: _containers.RepeatedScalarFieldContainer[str]
    outcome: _game_pb2.Outcome
    def __init__(self, cell: _Optional[int] = ..., position: _Optional[int] = ..., event: _Optional[_Union[_game_pb2.GameEvent, _Mapping]] = ..., lifecycle: _Optional[_Union[Lifecycle, str]] = ..., player_ids: _Optional[_Iterable[str]] = ..., outcome: _Optional[_Union[_game_pb2.Outcome, _Mapping]] = ...) -> None: ...

class FeedCheckpoint(_message.Message):
    __slots__ = ("positions", "caught_up", "sent_at")
    POSITIONS_FIELD_NUMBER: _ClassVar[int]
    CAUGHT_UP_FIELD_NUMBER: _ClassVar[int]
    SENT_AT_FIELD_NUMBER: _ClassVar[int]
    positions: _containers.RepeatedScalarFieldContainer[int]
    caught_up: bool
    sent_at: _timestamp_pb2.Timestamp
    def __init__(self, positions: _Optional[_Iterable[int]] = ..., caught_up: _Optional[bool] = ..., sent_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class StreamAllEventsResponse(_message.Message):
    __slots__ = ("event", "checkpoint")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    event: FeedEvent
    checkpoint: FeedCheckpoint
    def __init__(self, event: _Optional[_Union[FeedEvent, _Mapping]] = ..., checkpoint: _Optional[_Union[FeedCheckpoint, _Mapping]] = ...) -> None: ...

class GetReplayRequest(_message.Message):
    __slots__ = ("game_id", "page_size", "page_token", "round", "position_every", "position_at", "view")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    POSITION_EVERY_FIELD_NUMBER: _ClassVar[int]
    POSITION_AT_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    page_size: int
    page_token: str
    round: int
    position_every: int
    position_at: _containers.RepeatedScalarFieldContainer[int]
    view: GameView
    def __init__(self, game_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., round: _Optional[int] = ..., position_every: _Optional[int] = ..., position_at: _Optional[_Iterable[int]] = ..., view: _Optional[_Union[GameView, str]] = ...) -> None: ...

class ReplayStep(_message.Message):
    __slots__ = ("event", "position")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    event: _game_pb2.GameEvent
    position: _game_pb2.Position
    def __init__(self, event: _Optional[_Union[_game_pb2.GameEvent, _Mapping]] = ..., position: _Optional[_Union[_game_pb2.Position, _Mapping]] = ...) -> None: ...

class GetReplayResponse(_message.Message):
    __slots__ = ("game", "steps", "next_page_token")
    GAME_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    game: _game_pb2.Game
    steps: _containers.RepeatedCompositeFieldContainer[ReplayStep]
    next_page_token: str
    def __init__(self, game: _Optional[_Union[_game_pb2.Game, _Mapping]] = ..., steps: _Optional[_Iterable[_Union[ReplayStep, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListLegalMovesRequest(_message.Message):
    __slots__ = ("game_id", "page_size", "page_token")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    page_size: int
    page_token: str
    def __init__(self, game_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListLegalMovesResponse(_message.Message):
    __slots__ = ("seat_to_move", "moves", "sequence", "total", "next_page_token")
    SEAT_TO_MOVE_FIELD_NUMBER: _ClassVar[int]
    MOVES_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    seat_to_move: int
    moves: _containers.RepeatedCompositeFieldContainer[_game_pb2.Move]
    sequence: int
    total: int
    next_page_token: str
    def __init__(self, seat_to_move: _Optional[int] = ..., moves: _Optional[_Iterable[_Union[_game_pb2.Move, _Mapping]]] = ..., sequence: _Optional[int] = ..., total: _Optional[int] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class AnalysisTarget(_message.Message):
    __slots__ = ("game_id", "setup", "at_sequence")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SETUP_FIELD_NUMBER: _ClassVar[int]
    AT_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    setup: PositionSetup
    at_sequence: int
    def __init__(self, game_id: _Optional[str] = ..., setup: _Optional[_Union[PositionSetup, _Mapping]] = ..., at_sequence: _Optional[int] = ...) -> None: ...

class PositionSetup(_message.Message):
    __slots__ = ("rules", "seats", "moves")
    RULES_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    MOVES_FIELD_NUMBER: _ClassVar[int]
    rules: _game_pb2.RuleSet
    seats: int
    moves: _containers.RepeatedCompositeFieldContainer[_game_pb2.Move]
    def __init__(self, rules: _Optional[_Union[_game_pb2.RuleSet, _Mapping]] = ..., seats: _Optional[int] = ..., moves: _Optional[_Iterable[_Union[_game_pb2.Move, _Mapping]]] = ...) -> None: ...

class AnalysisBudget(_message.Message):
    __slots__ = ("nodes", "time_ms")
    NODES_FIELD_NUMBER: _ClassVar[int]
    TIME_MS_FIELD_NUMBER: _ClassVar[int]
    nodes: int
    time_ms: int
    def __init__(self, nodes: _Optional[int] = ..., time_ms: _Optional[int] = ...) -> None: ...

class SuggestMoveRequest(_message.Message):
    __slots__ = ("target", "engine", "strength", "seed", "budget")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    STRENGTH_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    target: AnalysisTarget
    engine: _game_pb2.Engine
    strength: int
    seed: int
    budget: AnalysisBudget
    def __init__(self, target: _Optional[_Union[AnalysisTarget, _Mapping]] = ..., engine: _Optional[_Union[_game_pb2.Engine, str]] = ..., strength: _Optional[int] = ..., seed: _Optional[int] = ..., budget: _Optional[_Union[AnalysisBudget, _Mapping]] = ...) -> None: ...

class SuggestMoveResponse(_message.Message):
    __slots__ = ("seat", "move", "score", "engine", "nodes", "sequence")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    move: _game_pb2.Move
    score: _game_pb2.Score
    engine: _game_pb2.Engine
    nodes: int
    sequence: int
    def __init__(self, seat: _Optional[int] = ..., move: _Optional[_Union[_game_pb2.Move, _Mapping]] = ..., score: _Optional[_Union[_game_pb2.Score, _Mapping]] = ..., engine: _Optional[_Union[_game_pb2.Engine, str]] = ..., nodes: _Optional[int] = ..., sequence: _Optional[int] = ...) -> None: ...

class AnalyzePositionRequest(_message.Message):
    __slots__ = ("target", "engine", "strength", "seed", "budget")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    STRENGTH_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    target: AnalysisTarget
    engine: _game_pb2.Engine
    strength: int
    seed: int
    budget: AnalysisBudget
    def __init__(self, target: _Optional[_Union[AnalysisTarget, _Mapping]] = ..., engine: _Optional[_Union[_game_pb2.Engine, str]] = ..., strength: _Optional[int] = ..., seed: _Optional[int] = ..., budget: _Optional[_Union[AnalysisBudget, _Mapping]] = ...) -> None: ...

class MoveScore(_message.Message):
    __slots__ = ("move", "score")
    MOVE_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    move: _game_pb2.Move
    score: _game_pb2.Score
    def __init__(self, move: _Optional[_Union[_game_pb2.Move, _Mapping]] = ..., score: _Optional[_Union[_game_pb2.Score, _Mapping]] = ...) -> None: ...

class AnalyzePositionResponse(_message.Message):
    __slots__ = ("seat", "score", "moves", "engine", "nodes", "sequence")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    MOVES_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    score: _game_pb2.Score
    moves: _containers.RepeatedCompositeFieldContainer[MoveScore]
    engine: _game_pb2.Engine
    nodes: int
    sequence: int
    def __init__(self, seat: _Optional[int] = ..., score: _Optional[_Union[_game_pb2.Score, _Mapping]] = ..., moves: _Optional[_Iterable[_Union[MoveScore, _Mapping]]] = ..., engine: _Optional[_Union[_game_pb2.Engine, str]] = ..., nodes: _Optional[int] = ..., sequence: _Optional[int] = ...) -> None: ...
