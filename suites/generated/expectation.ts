/**
 * What a generated request's answer may be: `negative` the spec (or HTTP) requires a refusal (a 4xx
 * with an Error body); `positive` a 2xx with a schema-valid body, or a refusal the spec allows;
 * `odd` HTTP or the spec leaves it open: anything but a 5xx, and a 4xx is an Error body.
 */
export type Expectation = 'negative' | 'positive' | 'odd';
