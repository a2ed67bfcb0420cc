// The component servers' question to the API server (src/component/scraper-auth.ts: may this
// bearer token GET this path?), asked over our REST client: component sits below client, so it
// declares the question and the programs hand it this answer.

import type { ApiServerCheck } from "../component/index.js";
import type { ClientConfig } from "./kubeconfig.js";
import { RestClient } from "./rest.js";

/** Asks the API server of `config` with the caller's token, never with the component's own credentials. */
export function apiServerCheck(config: ClientConfig): ApiServerCheck {
  // Our own credentials must not mix with the token being checked.
  const { token: _t, cert: _c, key: _k, ...server } = config;
  const client = new RestClient(server, { userAgent: "orch-component-authn", requestTimeoutMs: 10_000 });
  return {
    ...(config.ca !== undefined ? { ca: config.ca } : {}),
    async status(path, token) {
      const res = await client.request({ method: "GET", path, ...(token !== "" ? { headers: { authorization: `Bearer ${token}` } } : {}) });
      return res.status;
    },
    close: () => client.close(),
  };
}
