// Store URLs as afs shows them: a password in `scheme://user:pass@host` never reaches a terminal,
// a log or an error message; it shows as `user:***@`.

/**
 * The URL with the password of its userinfo replaced by `***`. Up to the last `@` counts as
 * userinfo, so a password holding an unencoded `@` or `/` is masked whole (at worst a path with
 * `@` in it is masked too).
 */
export function maskStoreUrl(url: string): string {
  const scheme = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.exec(url)?.[0];
  if (scheme === undefined) return url;
  const at = url.lastIndexOf("@");
  if (at < scheme.length) return url;
  const userinfo = url.slice(scheme.length, at);
  const colon = userinfo.indexOf(":");
  if (colon === -1) return url;
  return `${scheme}${userinfo.slice(0, colon)}:***${url.slice(at)}`;
}
