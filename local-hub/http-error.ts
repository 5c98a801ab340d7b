/** An error answer of the hub: a status and a `detail` for the JSON body. Thrown by handlers, rendered once. */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(status: number, detail: string, headers: Record<string, string> = {}) {
    super(detail);
    this.status = status;
    this.headers = headers;
  }
}

export const notFound = (what: string): HttpError => new HttpError(404, `${what} not found`);
export const invalid = (detail: string): HttpError => new HttpError(422, detail);
