/** A routed page: its root element and how to stop its timers and streams. */
export interface View {
  el: HTMLElement;
  title: string;
  destroy(): void;
}
