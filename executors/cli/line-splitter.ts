// Splits a byte stream into lines with a partial-line buffer and a per-line cap. Pure: no I/O, so the
// boundary cases (a line split across chunks, CRLF, a runaway line) are unit-testable. Each chunk is decoded as it
// arrives: a line of megabytes (a CLI's whole answer on one JSON line) was copied whole and decoded whole at its
// newline, some 25 ms of a held event loop for 3 MB on top of parsing it.
import { StringDecoder } from 'node:string_decoder';

export class LineTooLongError extends Error {
  override readonly name = 'LineTooLongError';
  readonly limitBytes: number;
  constructor(limitBytes: number) {
    super(`a line of output exceeded ${limitBytes} bytes`);
    this.limitBytes = limitBytes;
  }
}

export class LineSplitter {
  readonly #maxLineBytes: number;
  /** The unfinished line, decoded chunk by chunk (a newline byte never falls inside a UTF-8 sequence). */
  #parts: string[] = [];
  #pending = 0;
  readonly #decoder = new StringDecoder('utf8');

  constructor(maxLineBytes: number) {
    this.#maxLineBytes = maxLineBytes;
  }

  /**
   * Feeds one chunk; returns the complete lines it finished (without the newline, CR stripped). Throws
   * LineTooLongError as soon as the unfinished line passes the cap, so a runaway line never grows the buffer.
   */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      this.#append(chunk.subarray(start, nl));
      lines.push(this.#take());
      start = nl + 1;
    }
    if (start < chunk.length) this.#append(chunk.subarray(start));
    return lines;
  }

  /** The last line when the stream ended without a newline, if any. */
  end(): string | undefined {
    return this.#pending > 0 ? this.#take() : undefined;
  }

  #append(part: Buffer): void {
    if (part.length === 0) return;
    this.#pending += part.length;
    if (this.#pending > this.#maxLineBytes) {
      this.#parts = [];
      this.#pending = 0;
      throw new LineTooLongError(this.#maxLineBytes);
    }
    this.#parts.push(this.#decoder.write(part));
  }

  #take(): string {
    // end(): bytes of a sequence the line cut short become U+FFFD, as Buffer#toString makes them.
    this.#parts.push(this.#decoder.end());
    const line = this.#parts.join('');
    this.#parts = [];
    this.#pending = 0;
    return line.endsWith('\r') ? line.slice(0, -1) : line;
  }
}

/** Keeps the last `maxBytes` of a stream (stderr), for error messages. */
export class TailBuffer {
  readonly #maxBytes: number;
  #buf = Buffer.alloc(0);

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  push(chunk: Buffer): void {
    // Only the newest bytes matter; a huge chunk is cut before it is copied.
    const recent = chunk.length >= this.#maxBytes ? chunk.subarray(chunk.length - this.#maxBytes) : chunk;
    const joined = Buffer.concat([this.#buf, recent]);
    this.#buf = Buffer.from(joined.subarray(Math.max(0, joined.length - this.#maxBytes)));
  }

  text(): string {
    return this.#buf.toString('utf8');
  }
}
