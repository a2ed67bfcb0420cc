// The dashboard (issue 21): sign in with a token, then every view reads the
// API as the signed-in user (RBAC applies unchanged).

import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { parse as parseYaml } from "yaml";
import "./style.css";
import { ApiError, getJson, onSignedOut, request, setToken, currentToken } from "./api.js";
import { collectionPath, discover, find, suffixOf, type Discovery } from "./discovery.js";
import { useLiveObjects } from "./live.js";
import { useRoute, type Route } from "./router.js";
import { ErrorBox } from "./components.js";
import { KindsView, KindTable, ListView } from "./views/list.js";
import { ObjectView } from "./views/object.js";
import { PodsView } from "./views/pods.js";
import { Overview, Services, Workloads } from "./views/overview.js";

const NS_KEY = "orch.dashboard.namespace";

/** The token of a kubeconfig's current context's user (client certificates cannot be used by a page). */
export function tokenFromKubeconfig(text: string): string {
  const kc = parseYaml(text) as { "current-context"?: string; contexts?: { name: string; context: { user: string } }[]; users?: { name: string; user: { token?: string; "client-certificate-data"?: string } }[] };
  if (typeof kc !== "object" || kc === null) throw new Error("not a kubeconfig");
  const ctx = kc.contexts?.find((c) => c.name === kc["current-context"]) ?? kc.contexts?.[0];
  const user = kc.users?.find((u) => u.name === ctx?.context.user) ?? kc.users?.[0];
  if (user?.user.token) return user.user.token;
  if (user?.user["client-certificate-data"]) throw new Error("this kubeconfig's user signs in with a client certificate, which a page cannot use: paste a token (a service account's, or the admin token from admin.kubeconfig)");
  throw new Error("this kubeconfig has no token");
}

function SignIn({ onSignedIn, reason }: { onSignedIn: (user: string) => void; reason: string | undefined }) {
  const [text, setText] = useState("");
  const [error, setError] = useState<string | undefined>(reason);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const value = text.trim();
      const token = value.includes("apiVersion") || value.includes("users:") ? tokenFromKubeconfig(value) : value;
      if (token === "" || /\s/.test(token)) throw new Error("paste a bearer token (one word) or a kubeconfig");
      setToken(token);
      onSignedIn(await whoAmI());
    } catch (err) {
      setToken(undefined);
      setError(err instanceof ApiError && err.code === 401 ? "the server does not accept this token" : (err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="signin" onSubmit={submit}>
      <h1>orch dashboard</h1>
      <p>Sign in with a bearer token, or paste (or open) a kubeconfig that holds one, such as the admin.kubeconfig <code>orch server</code> writes. Every request the dashboard makes carries it: you see and change what its user may.</p>
      <textarea aria-label="token" placeholder="token or kubeconfig" value={text} onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)} rows={6} />
      <div class="toolbar">
        <input type="file" aria-label="kubeconfig file" onChange={async (e) => {
          const f = (e.currentTarget as HTMLInputElement).files?.[0];
          if (f) setText(await f.text());
        }} />
        <button type="submit" disabled={busy || text.trim() === ""}>Sign in</button>
      </div>
      <ErrorBox message={error} />
    </form>
  );
}

/** Who the token is: a SelfSubjectReview where served; otherwise a read of /api proves the token works. */
async function whoAmI(): Promise<string> {
  await request("/api");
  const groups = await getJson<{ groups: { name: string }[] }>("/apis");
  const gv = `authentication.${suffixOf(groups.groups.map((g) => g.name))}/v1`;
  try {
    const review = await getJson<{ status?: { userInfo?: { username?: string } } }>(`/apis/${gv}/selfsubjectreviews`, {
      method: "POST",
      contentType: "application/json",
      body: JSON.stringify({ apiVersion: gv, kind: "SelfSubjectReview" }),
    });
    return review.status?.userInfo?.username ?? "signed in";
  } catch {
    return "signed in";
  }
}

function NamespacePicker({ d, value, onChange }: { d: Discovery; value: string | undefined; onChange: (ns: string | undefined) => void }) {
  const r = find(d, "", "namespaces");
  const live = useLiveObjects(r ? collectionPath(r) : undefined);
  return (
    <select aria-label="namespace" value={value ?? ""} onChange={(e) => onChange((e.currentTarget as HTMLSelectElement).value || undefined)}>
      <option value="">all namespaces</option>
      {live.items.map((n) => <option key={n.metadata.name} value={n.metadata.name}>{n.metadata.name}</option>)}
      {value && !live.items.some((n) => n.metadata.name === value) && <option value={value}>{value}</option>}
    </select>
  );
}

const NAV: [Route["view"], string][] = [["overview", "Overview"], ["namespaces", "Namespaces"], ["workloads", "Workloads"], ["pods", "Pods"], ["services", "Services"], ["kinds", "All kinds"]];

function Shell({ user, onSignOut }: { user: string; onSignOut: () => void }) {
  const route = useRoute();
  const [d, setD] = useState<Discovery>();
  const [error, setError] = useState<string>();
  const [namespace, setNamespace] = useState<string | undefined>(localStorage.getItem(NS_KEY) || undefined);
  const load = () => discover().then(setD, (err: Error) => setError(err.message));
  useEffect(() => void load(), []);
  // Kinds come and go (custom resources): discovery is read again when the kinds view opens.
  useEffect(() => {
    if (route.view === "kinds" || route.view === "list") void load();
  }, [route.view]);
  const pick = (ns: string | undefined) => {
    setNamespace(ns);
    if (ns) localStorage.setItem(NS_KEY, ns);
    else localStorage.removeItem(NS_KEY);
  };
  return (
    <div class="shell">
      <header>
        <a class="brand" href="#/">orch</a>
        <nav>
          {NAV.map(([view, label]) => <a key={view} href={view === "overview" ? "#/" : `#/${view}`} class={route.view === view ? "active" : ""}>{label}</a>)}
        </nav>
        {d && <NamespacePicker d={d} value={namespace} onChange={pick} />}
        <span class="user" data-testid="user">{user}</span>
        <button onClick={onSignOut}>Sign out</button>
      </header>
      <main>
        <ErrorBox message={error} />
        {d === undefined ? <div class="muted">Reading the server's kinds…</div> : <View d={d} route={route} namespace={namespace} />}
      </main>
    </div>
  );
}

function View({ d, route, namespace }: { d: Discovery; route: Route; namespace: string | undefined }) {
  switch (route.view) {
    case "overview":
      return <Overview d={d} namespace={namespace} />;
    case "namespaces":
      return <KindTable d={d} r={find(d, "", "namespaces")} namespace={undefined} title="Namespaces" />;
    case "workloads":
      return <Workloads d={d} namespace={namespace} />;
    case "pods":
      return <PodsView d={d} namespace={namespace} />;
    case "services":
      return <Services d={d} namespace={namespace} />;
    case "kinds":
      return <KindsView d={d} />;
    case "list":
      return <ListView d={d} group={route.group} resource={route.resource} namespace={namespace} />;
    case "object":
      return <ObjectView d={d} group={route.group} resource={route.resource} namespace={route.namespace} name={route.name} tab={route.tab} />;
  }
}

function App() {
  const [user, setUser] = useState<string>();
  const [checking, setChecking] = useState(currentToken() !== undefined);
  const [reason, setReason] = useState<string>();
  useEffect(() => {
    if (currentToken() === undefined) return;
    whoAmI().then(setUser, () => setToken(undefined)).finally(() => setChecking(false));
  }, []);
  useEffect(() => onSignedOut(() => {
    setToken(undefined);
    setUser(undefined);
    setReason("the server no longer accepts the token: sign in again");
  }), []);
  if (checking) return <div class="muted">Signing in…</div>;
  if (user === undefined) return <SignIn onSignedIn={(u) => { setReason(undefined); setUser(u); }} reason={reason} />;
  return <Shell user={user} onSignOut={() => { setToken(undefined); setUser(undefined); }} />;
}

const root = document.getElementById("app")!;
// The page's "Loading…" note goes once the script runs.
root.textContent = "";
render(<App />, root);
