// `--token-auth-file`: static bearer tokens from upstream's CSV, one user a
// line: `token,user,uid,"group1,group2"` (the groups column is optional).
// Upstream reads it with Go's CSV reader (quoted fields, "" inside quotes,
// leading spaces trimmed); a line it cannot read stops the server, and so does
// a line with an empty token or user or a token seen before (upstream only
// warns about the last two: a second user silently losing its token is worse).

import { readFileSync } from "node:fs";
import type { UserInfo } from "./context.js";
import { TokenAuthenticator } from "./authentication.js";

/** Reads the file (errors name the file and line) into the table a TokenAuthenticator serves. */
export function tokenFileAuthenticator(path: string): TokenAuthenticator {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new Error(`--token-auth-file: cannot read ${path}: ${(err as Error).message}`);
  }
  return new TokenAuthenticator(parseTokenFile(text, path));
}

export function parseTokenFile(text: string, path: string): Map<string, UserInfo> {
  const users = new Map<string, UserInfo>();
  const lines = text.split(/\r?\n/);
  lines.forEach((line, i) => {
    const where = `token file '${path}', line ${i + 1}`;
    if (line.trim() === "") return;
    const record = csvRecord(line, where);
    if (record.length < 3) throw new Error(`${where}: must have at least 3 columns (token, user name, user uid), found ${record.length}`);
    const [token, name, uid, groups] = record as [string, string, string, string | undefined];
    if (token === "") throw new Error(`${where}: empty token`);
    if (name === "") throw new Error(`${where}: empty user name`);
    if (users.has(token)) throw new Error(`${where}: duplicate token (already given to user "${users.get(token)!.name}")`);
    const listed = groups === undefined || groups === "" ? [] : groups.split(",").map((g) => g.trim()).filter((g) => g !== "");
    users.set(token, { name, ...(uid !== "" ? { uid } : {}), groups: [...listed, "system:authenticated"] });
  });
  return users;
}

/** One CSV record on one line, as Go's encoding/csv with TrimLeadingSpace reads it. */
function csvRecord(line: string, where: string): string[] {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    while (line[i] === " " || line[i] === "\t") i++;
    let field = "";
    if (line[i] === '"') {
      i++;
      for (;;) {
        if (i >= line.length) throw new Error(`${where}: extraneous or missing " in quoted-field`);
        if (line[i] === '"') {
          if (line[i + 1] === '"') { field += '"'; i += 2; continue; }
          i++;
          break;
        }
        field += line[i++];
      }
      if (i < line.length && line[i] !== ",") throw new Error(`${where}: extraneous or missing " in quoted-field`);
    } else {
      const end = line.indexOf(",", i);
      field = line.slice(i, end < 0 ? line.length : end);
      if (field.includes('"')) throw new Error(`${where}: bare " in non-quoted-field`);
      i = end < 0 ? line.length : end;
    }
    fields.push(field);
    if (i >= line.length) return fields;
    i++; // the comma
  }
}
