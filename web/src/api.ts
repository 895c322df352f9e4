// The grpc-web client of plylog.v1.GameService. The dashboard is read-only:
// it calls ListGames, StreamAllEvents, GetGame, StreamEvents and GetReplay,
// and never sends a seat token.

import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { GameService } from "./gen/plylog/v1/game_service_pb";

/** The server: this page's origin, or `?api=http://host:port` for development. */
export function apiBaseUrl(): string {
  const api = new URLSearchParams(location.search).get("api");
  return (api || location.origin).replace(/\/+$/, "");
}

export type GameClient = Client<typeof GameService>;

export const client: GameClient = createClient(
  GameService,
  createGrpcWebTransport({ baseUrl: apiBaseUrl(), useBinaryFormat: true }),
);

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    });
  });
}

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
