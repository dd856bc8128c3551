// The script's world apart from `actions` (rendered per sandbox by agents/typescript.py,
// which places this after the action declarations). It mirrors engine/js/prelude.js and
// engine/js/textcodec.js, and the README's table of the script's world; tests/test_tsc.py compiles it.

/** Options of an action call. */
interface CallOptions {
  /** Narration: stored with the call and shown in the timeline, but not part of its replay key. */
  description?: string;
}

/** An action failed: it raised, timed out, was rejected by a human, or refused its input. Catchable. */
declare class ActionError extends Error {
  readonly name: "ActionError";
  /** The action's name. */
  readonly action: string;
  /** When the input did not match the action's schema, or its result its declared type: what was wrong,
   * where (`$` is the input, or the result). */
  readonly issues?: { path: string; message: string }[];
}

type ActionName = keyof ActionMap;
type ActionInput<K extends ActionName> = Parameters<ActionMap[K]>[0];
type LogLevel = "debug" | "info" | "warn" | "error" | "log";
type PlanItem = string | { title: string; done?: boolean };
type Settled<T> = { status: "fulfilled"; value: T } | { status: "rejected"; reason: any };

declare const ctx: {
  /** The run's input (the tool's `input` argument). */
  readonly input: any;
  /** This run's id. */
  readonly runId: string;
  /** Call an action by name: the same as `actions[name](input, options)`. */
  call<K extends ActionName>(name: K, ...args: Parameters<ActionMap[K]>): ReturnType<ActionMap[K]>;
  /** Run another script as a child run; resolves to its output, throws ActionError when it fails. */
  delegate(spec: { script: string; input?: unknown; name?: string }): Promise<any>;
  /** Run a registered Python agent as a child run; resolves to its output. */
  agent(spec: { agent: string; input?: unknown }): Promise<any>;
  /** Start every thunk at once; resolves to their results in order (like Promise.all). */
  parallel<T extends readonly (() => unknown)[] | []>(thunks: T): Promise<{ -readonly [K in keyof T]: Awaited<ReturnType<T[K]>> }>;
  /** Like parallel, but waits for all and reports each outcome (like Promise.allSettled). */
  parallelSettled<T extends readonly (() => unknown)[] | []>(thunks: T): Promise<{ -readonly [K in keyof T]: Settled<Awaited<ReturnType<T[K]>>> }>;
  /** A named unit of work: its start and end are journaled and shown nested in the timeline. */
  step<T>(label: string, fn: () => T | Promise<T>): Promise<T>;
  /** Publish a checklist (shown in the timeline); call again to tick items. */
  plan(plan: PlanItem[]): void;
  /** Park the run on a timer (it survives a restart); resolves when the time has passed. */
  sleep(ms: number): Promise<null>;
  minutes(n: number): Promise<null>;
  hours(n: number): Promise<null>;
  /**
   * Park until a matching event arrives (a signal); null after `timeout` ms. An object matches an event
   * with every one of its fields; any other value (`"go"`, `42`) an event equal to it; none, null or `{}` any event.
   */
  waitForEvent<T = any>(match?: unknown, options?: { timeout?: number | null }): Promise<T | null>;
  /** End this run and start its successor with `state` as input. Never resolves. */
  continueAsNew(state?: unknown): Promise<never>;
  /** The clock (epoch ms), read as a journaled effect. */
  now(): Promise<number>;
  /** A journaled log line. */
  log(level: LogLevel, message: string, data?: unknown): void;
  /** Progress for the live view (not journaled). */
  progress(patch: { percent?: number; done?: number; total?: number; message?: string } | null): void;
};

declare const console: {
  log(...args: unknown[]): void;
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
  debug(...args: unknown[]): void;
};

/** Free-form values the run publishes beside its output (kept with the run). */
declare const data: Record<string, any>;

declare class TextEncoder {
  readonly encoding: "utf-8";
  encode(input?: string): Uint8Array;
  encodeInto(source: string, destination: Uint8Array): { read: number; written: number };
}

declare class TextDecoder {
  constructor(label?: string, options?: { fatal?: boolean; ignoreBOM?: boolean });
  readonly encoding: "utf-8";
  readonly fatal: boolean;
  readonly ignoreBOM: boolean;
  decode(input?: ArrayBuffer | ArrayBufferView, options?: { stream?: boolean }): string;
}
