// An exec terminal: xterm.js over a WebSocket to the API server's pods/exec,
// subprotocol v5.channel.k8s.io. A browser cannot set an Authorization
// header on a WebSocket, so the token rides as the subprotocol
// base64url.bearer.authorization.k8s.io.<token> (upstream's convention),
// which the server checks and drops. Frames: one channel byte, then data:
// 0 stdin, 1 stdout, 2 stderr, 3 error (a Status), 4 resize; 255 closes a channel (v5).

import { useEffect, useRef, useState } from "preact/hooks";
import { Terminal as XTerm } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";
import "@xterm/xterm/css/xterm.css";
import { currentToken } from "../api.js";
import { objectPath } from "../discovery.js";
import type { Pod } from "./pods.js";
import { ContainerSelect } from "../components.js";

function bearerProtocol(token: string): string {
  const bytes = new TextEncoder().encode(token);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return `base64url.bearer.authorization.k8s.io.${btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}`;
}

export function Terminal({ pod }: { pod: Pod }) {
  const names = (pod.spec?.containers ?? []).map((c) => c.name);
  const [container, setContainer] = useState(names[0] ?? "");
  const [command, setCommand] = useState("sh");
  const [session, setSession] = useState(0);
  const [state, setState] = useState("connecting");
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!host.current) return;
    const term = new XTerm({ cursorBlink: true, fontSize: 13, convertEol: false, theme: { background: "#111418" } });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(host.current);
    fit.fit();
    const q = new URLSearchParams({ container, stdin: "true", stdout: "true", stderr: "true", tty: "true" });
    for (const word of command.trim().split(/\s+/).filter((w) => w !== "")) q.append("command", word);
    const url = `wss://${location.host}${objectPath({ group: "", version: "v1", resource: "pods", namespaced: true }, pod.metadata.namespace, pod.metadata.name)}/exec?${q}`;
    const token = currentToken();
    const ws = new WebSocket(url, ["v5.channel.k8s.io", ...(token ? [bearerProtocol(token)] : [])]);
    ws.binaryType = "arraybuffer";
    const encoder = new TextEncoder();
    const send = (channel: number, data: Uint8Array) => {
      if (ws.readyState !== WebSocket.OPEN) return;
      const frame = new Uint8Array(data.length + 1);
      frame[0] = channel;
      frame.set(data, 1);
      ws.send(frame);
    };
    const resize = () => send(4, encoder.encode(JSON.stringify({ Width: term.cols, Height: term.rows })));
    ws.onopen = () => {
      setState(`connected (${ws.protocol})`);
      resize();
      term.focus();
    };
    ws.onmessage = (e) => {
      const data = new Uint8Array(e.data as ArrayBuffer);
      const channel = data[0];
      const body = data.subarray(1);
      if (channel === 1 || channel === 2) term.write(body);
      else if (channel === 3) {
        const text = new TextDecoder().decode(body);
        try {
          const status = JSON.parse(text) as { status?: string; message?: string };
          if (status.status !== "Success") term.write(`\r\n\x1b[31m${status.message ?? text}\x1b[0m\r\n`);
        } catch {
          term.write(`\r\n${text}\r\n`);
        }
      }
    };
    ws.onclose = (e) => setState(e.code === 1000 || e.code === 1005 ? "session ended" : `closed (${e.code}${e.reason ? `: ${e.reason}` : ""})`);
    ws.onerror = () => setState("could not connect (see the server's answer in the browser's network log)");
    const input = term.onData((s) => send(0, encoder.encode(s)));
    const onResize = () => fit.fit();
    const sized = term.onResize(resize);
    addEventListener("resize", onResize);
    return () => {
      removeEventListener("resize", onResize);
      input.dispose();
      sized.dispose();
      ws.close();
      term.dispose();
    };
  }, [pod.metadata.uid, container, session]);
  return (
    <div class="exec">
      <form
        class="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          setState("connecting");
          setSession((s) => s + 1);
        }}
      >
        <ContainerSelect names={names} value={container} onChange={setContainer} label="exec container" />
        <label>
          command <input value={command} onInput={(e) => setCommand((e.currentTarget as HTMLInputElement).value)} aria-label="command" />
        </label>
        <button type="submit">Reconnect</button>
        <span class="muted" data-testid="exec-state">{state}</span>
      </form>
      <div class="terminal" ref={host} data-testid="terminal" />
    </div>
  );
}
