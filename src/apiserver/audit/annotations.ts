// Audit annotations: what request handling (admission plugins) adds to a
// request's audit event, kept by request until the audit filter writes it.

const byRequest = new WeakMap<object, Record<string, string>>();

export function addAuditAnnotation(req: object, key: string, value: string): void {
  let annotations = byRequest.get(req);
  if (annotations === undefined) byRequest.set(req, (annotations = {}));
  annotations[key] = value;
}

export function auditAnnotationsOf(req: object): Readonly<Record<string, string>> | undefined {
  return byRequest.get(req);
}
