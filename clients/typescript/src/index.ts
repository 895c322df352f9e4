// @plylog/client: a typed client of plylog.v1 for Node.
//
// The messages, enums and the GameService descriptor are protoc-gen-es's
// (gen/, generated from proto/ with buf.gen.yaml); this module adds a
// client over one of Connect's three Node transports, the seat token in a
// call's headers, and the reason of a refusal.

import { BinaryReader } from "@bufbuild/protobuf/wire";
import {
  type CallOptions,
  type Client,
  ConnectError,
  type Interceptor,
  type Transport,
  createClient,
} from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";

import { GameService } from "../gen/plylog/v1/game_service_pb.js";

export * from "../gen/plylog/v1/game_pb.js";
export * from "../gen/plylog/v1/game_service_pb.js";
// What a caller needs besides the generated code, so that importing
// @plylog/client is enough: building messages and reading refusals.
export { create, fromJson, toJson } from "@bufbuild/protobuf";
export { Code, ConnectError } from "@connectrpc/connect";
export type { CallOptions, Client, Interceptor, Transport } from "@connectrpc/connect";

/**
 * How the client talks to the server; the plylog port speaks all three.
 *
 * - `"connect"`: the Connect protocol (connectrpc.com), JSON by default
 *   (`binary: true` for protobuf), over HTTP/1.1 or HTTP/2.
 * - `"grpc-web"`: grpc-web, binary, over HTTP/1.1 or HTTP/2.
 * - `"grpc"`: gRPC, binary, over HTTP/2 only.
 */
export type Protocol = "connect" | "grpc-web" | "grpc";

/** The options of {@link createPlylogClient}. */
export interface PlylogClientOptions {
  /** The server's address with its scheme: `http://127.0.0.1:50051`. */
  baseUrl: string;
  /** The protocol; `"connect"` when absent. */
  protocol?: Protocol;
  /**
   * Protobuf binary rather than JSON, for `"connect"`; grpc-web and gRPC
   * are always binary here. False when absent.
   */
  binary?: boolean;
  /**
   * A token sent as `authorization: Bearer <token>` on every call that does
   * not send its own (the server's API key, or one seat's token). Per call,
   * see {@link withToken}.
   */
  token?: string;
  /**
   * The HTTP version: `"1.1"` when absent for `"connect"` and
   * `"grpc-web"`, which take either; gRPC needs `"2"`.
   */
  httpVersion?: "1.1" | "2";
  /** A timeout for every call that sets none, in milliseconds. */
  defaultTimeoutMs?: number;
  /** More interceptors, run after the one that adds `token`. */
  interceptors?: Interceptor[];
}

/** A client of plylog.v1.GameService: one method per RPC, lowerCamelCase. */
export type PlylogClient = Client<typeof GameService>;

/** The header value of a bearer token. */
function bearer(token: string): string {
  return `Bearer ${token}`;
}

/** Adds `authorization: Bearer <token>` to calls that carry none. */
function tokenInterceptor(token: string): Interceptor {
  return (next) => async (req) => {
    if (!req.header.has("authorization")) {
      req.header.set("authorization", bearer(token));
    }
    return next(req);
  };
}

/** The transport {@link createPlylogClient} uses, for `createClient` of your own. */
export function createPlylogTransport(options: PlylogClientOptions): Transport {
  const protocol = options.protocol ?? "connect";
  const interceptors = [
    ...(options.token ? [tokenInterceptor(options.token)] : []),
    ...(options.interceptors ?? []),
  ];
  const common = {
    baseUrl: options.baseUrl,
    interceptors,
    defaultTimeoutMs: options.defaultTimeoutMs,
  };
  switch (protocol) {
    case "connect":
      return createConnectTransport({
        ...common,
        httpVersion: options.httpVersion ?? "1.1",
        useBinaryFormat: options.binary ?? false,
      });
    case "grpc-web":
      if (options.binary === false) {
        throw new Error("grpc-web here is binary only: leave out `binary`");
      }
      return createGrpcWebTransport({ ...common, httpVersion: options.httpVersion ?? "1.1" });
    case "grpc":
      if (options.httpVersion === "1.1") {
        throw new Error("gRPC needs HTTP/2: leave out `httpVersion` or set it to \"2\"");
      }
      if (options.binary === false) {
        throw new Error("gRPC here is binary only: leave out `binary`");
      }
      return createGrpcTransport(common);
    default:
      throw new Error(`unknown protocol ${String(protocol)}: "connect", "grpc-web" or "grpc"`);
  }
}

/**
 * A client of plylog.v1.GameService at `baseUrl`, over the Connect protocol
 * with JSON unless `protocol` or `binary` say otherwise.
 *
 * ```ts
 * const client = createPlylogClient({ baseUrl: "http://127.0.0.1:50051" });
 * const { game, seatTokens } = await client.createGame({ ... });
 * await client.submitMove({ gameId, seat: 0, move }, withToken(seatTokens[0]));
 * ```
 */
export function createPlylogClient(options: PlylogClientOptions): PlylogClient {
  return createClient(GameService, createPlylogTransport(options));
}

/**
 * Call options that send `token` as `authorization: Bearer <token>`: a
 * seat's token for its moves, or the server's API key. An empty or absent
 * token (a game created without seat tokens) sends no header. `options`'
 * other settings (a timeout, a signal) are kept.
 */
export function withToken(token: string | undefined, options: CallOptions = {}): CallOptions {
  if (!token) return options;
  const headers = new Headers(options.headers);
  headers.set("authorization", bearer(token));
  return { ...options, headers };
}

/** A refusal's google.rpc.ErrorInfo: its reason, domain and metadata. */
export interface ErrorInfo {
  /** An `ErrorReason` name, as `CELL_OCCUPIED`. */
  reason: string;
  /** `plylog.v1`. */
  domain: string;
  /** More about the refusal, as `current_sequence` for SEQUENCE_MISMATCH. */
  metadata: Record<string, string>;
}

/** Decodes a google.rpc.ErrorInfo: reason = 1, domain = 2, map<string, string> metadata = 3. */
function decodeErrorInfo(bytes: Uint8Array): ErrorInfo {
  const info: ErrorInfo = { reason: "", domain: "", metadata: {} };
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1) {
      info.reason = reader.string();
    } else if (field === 2) {
      info.domain = reader.string();
    } else if (field === 3) {
      const entry = new BinaryReader(reader.bytes());
      let key = "";
      let value = "";
      while (entry.pos < entry.len) {
        const [entryField, entryWireType] = entry.tag();
        if (entryField === 1) key = entry.string();
        else if (entryField === 2) value = entry.string();
        else entry.skip(entryWireType);
      }
      info.metadata[key] = value;
    } else {
      reader.skip(wireType);
    }
  }
  return info;
}

/**
 * The google.rpc.ErrorInfo detail of a refusal, whatever the protocol;
 * `undefined` when the error carries none (it did not come from plylog,
 * or the connection failed). `error` may be anything a call threw.
 */
export function errorInfo(error: unknown): ErrorInfo | undefined {
  const connectError = ConnectError.from(error);
  for (const detail of connectError.details) {
    if ("type" in detail && detail.type === "google.rpc.ErrorInfo") {
      return decodeErrorInfo(detail.value);
    }
  }
  return undefined;
}

/**
 * The reason of a refusal (an `ErrorReason` name, as `CELL_OCCUPIED`), from
 * its google.rpc.ErrorInfo detail; `undefined` when there is none. Compare it
 * with `ErrorReason[ErrorReason.CELL_OCCUPIED]`, or look up its value with
 * `ErrorReason[reason as keyof typeof ErrorReason]`.
 */
export function errorReason(error: unknown): string | undefined {
  return errorInfo(error)?.reason;
}
