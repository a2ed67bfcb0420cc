// Reading the PEM PKCS#10 request a CertificateSigningRequest carries:
// upstream's ParseCSR and CheckSignature, synchronously (validation hooks are
// synchronous): the structure is parsed by @peculiar/x509, the signature
// over the request info is checked with node:crypto against the request's
// own public key.

import { createPublicKey, verify } from "node:crypto";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/;

/** What the signer and the approver read of a request. */
export interface ParsedCsr {
  /** The subject's CN and O values. */
  readonly commonName: string;
  readonly organizations: readonly string[];
  readonly dnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
  readonly emailAddresses: readonly string[];
  readonly uris: readonly string[];
  /** The request's public key, SubjectPublicKeyInfo DER. */
  readonly publicKeyDer: Buffer;
  /** The PEM text. */
  readonly pem: string;
}

/** Upstream's ParseCSR + CheckSignature on the decoded bytes of spec.request; throws with upstream's messages. */
export function parseCsr(pemBytes: Buffer | string): ParsedCsr {
  const text = typeof pemBytes === "string" ? pemBytes : pemBytes.toString("latin1");
  const block = PEM_BLOCK.exec(text);
  if (block === null) throw new Error("PEM block type must be CERTIFICATE REQUEST");
  if (block[1] !== "CERTIFICATE REQUEST") throw new Error("PEM block type must be CERTIFICATE REQUEST");
  const der = Buffer.from(block[2]!.replace(/\s+/g, ""), "base64");
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(der);
  } catch (err) {
    throw new Error(`asn1: structure error: ${(err as Error).message}`);
  }
  const [info, , signature] = derChildren(der);
  if (info === undefined || signature === undefined) throw new Error("asn1: structure error: truncated certificate request");
  const publicKeyDer = Buffer.from(csr.publicKey.rawData);
  const hash = (csr.signatureAlgorithm as { hash?: { name?: string } }).hash?.name;
  const ok = verify(hash ? hash.replace("-", "").toLowerCase() : null, info, createPublicKey({ key: publicKeyDer, format: "der", type: "spki" }), signature.subarray(1));
  if (!ok) throw new Error("x509: ECDSA verification failure");
  const san = csr.extensions.find((e): e is x509.SubjectAlternativeNameExtension => e instanceof x509.SubjectAlternativeNameExtension);
  const names = san?.names.items ?? [];
  const of = (kind: string) => names.filter((n) => n.type === kind).map((n) => n.value);
  return {
    commonName: csr.subjectName.getField("CN")[0] ?? "",
    organizations: csr.subjectName.getField("O"),
    dnsNames: of("dns"),
    ipAddresses: of("ip"),
    emailAddresses: of("email"),
    uris: of("url"),
    publicKeyDer,
    pem: block[0],
  };
}

/** The complete TLVs inside the DER SEQUENCE `der` (content bytes for the last one, a BIT STRING, are returned without their header). */
function derChildren(der: Buffer): Buffer[] {
  const outer = header(der, 0);
  const out: Buffer[] = [];
  let at = outer.contentStart;
  const end = outer.contentStart + outer.length;
  while (at < end) {
    const h = header(der, at);
    const whole = der.subarray(at, h.contentStart + h.length);
    out.push(der[at] === 0x03 ? der.subarray(h.contentStart, h.contentStart + h.length) : whole);
    at = h.contentStart + h.length;
  }
  return out;
}

function header(der: Buffer, at: number): { contentStart: number; length: number } {
  if (at + 2 > der.length) throw new Error("asn1: structure error: truncated tag");
  const first = der[at + 1]!;
  if (first < 0x80) return { contentStart: at + 2, length: first };
  const n = first & 0x7f;
  let length = 0;
  for (let i = 0; i < n; i++) length = length * 256 + der[at + 2 + i]!;
  if (at + 2 + n + length > der.length) throw new Error("asn1: structure error: data truncated");
  return { contentStart: at + 2 + n, length };
}
