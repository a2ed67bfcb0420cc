// The keys of service-account tokens. One private key signs
// (--service-account-signing-key-file; by default sa.key in the data folder,
// an ECDSA P-256 key made at first start, as kubeadm makes its sa.key); every
// public key of --service-account-key-file, and the signing key's own, verify.
// A file may hold several PEM blocks: public keys, private keys (their public
// half is used) and certificates. RSA keys sign RS256, EC keys ES256/384/512,
// as upstream; the key id (`kid`) is upstream's: the unpadded base64url
// SHA-256 of the public key's DER (PKIX), so tokens name the key that made them.

import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, X509Certificate, type KeyObject } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export type SigningAlgorithm = "RS256" | "ES256" | "ES384" | "ES512";

export interface VerifyingKey {
  readonly key: KeyObject;
  readonly alg: SigningAlgorithm;
  readonly kid: string;
}

export interface SigningKey extends VerifyingKey {
  readonly privateKey: KeyObject;
}

export interface ServiceAccountKeys {
  readonly signing: SigningKey;
  readonly verifying: readonly VerifyingKey[];
}

export interface ServiceAccountKeyFiles {
  /** The API server's data folder: sa.key lives there when no signing key file is given. */
  readonly dataDir: string;
  /** --service-account-signing-key-file: a PEM private key. */
  readonly signingKeyFile?: string;
  /** --service-account-key-file (repeatable): PEM public keys, private keys or certificates that verify tokens. */
  readonly keyFiles?: readonly string[];
}

/** The default signing key's file name in the data folder (kubeadm's name). */
export const DEFAULT_SIGNING_KEY_FILE = "sa.key";

/** Reads (or, for the default file, makes) the keys; a file that is missing or holds no usable key stops the start, naming the flag. */
export function loadServiceAccountKeys(files: ServiceAccountKeyFiles): ServiceAccountKeys {
  const signing = signingKey(files);
  const verifying: VerifyingKey[] = [signing];
  for (const file of files.keyFiles ?? []) {
    const keys = publicKeysIn(read(file, "--service-account-key-file"), file);
    if (keys.length === 0) throw new Error(`--service-account-key-file: ${file} holds no PEM public key, private key or certificate`);
    for (const key of keys) if (!verifying.some((v) => v.kid === key.kid)) verifying.push(key);
  }
  return { signing, verifying };
}

function signingKey(files: ServiceAccountKeyFiles): SigningKey {
  const given = files.signingKeyFile !== undefined && files.signingKeyFile !== "";
  const path = given ? files.signingKeyFile! : join(files.dataDir, DEFAULT_SIGNING_KEY_FILE);
  if (!given && !existsSync(path)) {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    writeFileSync(path, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
  }
  const text = read(path, "--service-account-signing-key-file");
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(text);
  } catch (err) {
    throw new Error(`--service-account-signing-key-file: ${path}: not a PEM private key: ${(err as Error).message}`);
  }
  const key = createPublicKey(privateKey);
  return { key, privateKey, alg: algorithmOf(key, path), kid: keyId(key) };
}

function read(path: string, flag: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw new Error(`${flag}: cannot read ${path}: ${(err as Error).message}`);
  }
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

function publicKeysIn(text: string, file: string): VerifyingKey[] {
  const keys: VerifyingKey[] = [];
  for (const [block, label] of text.matchAll(PEM_BLOCK)) {
    let key: KeyObject;
    try {
      key = label === "CERTIFICATE" ? new X509Certificate(block).publicKey : createPublicKey(block);
    } catch (err) {
      throw new Error(`--service-account-key-file: ${file}: the ${label} block is not usable: ${(err as Error).message}`);
    }
    keys.push({ key, alg: algorithmOf(key, file), kid: keyId(key) });
  }
  return keys;
}

function algorithmOf(key: KeyObject, file: string): SigningAlgorithm {
  if (key.asymmetricKeyType === "rsa") return "RS256";
  if (key.asymmetricKeyType === "ec") {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === "prime256v1") return "ES256";
    if (curve === "secp384r1") return "ES384";
    if (curve === "secp521r1") return "ES512";
    throw new Error(`${file}: unsupported elliptic curve ${curve ?? "(unknown)"} (P-256, P-384 or P-521)`);
  }
  throw new Error(`${file}: unsupported key type ${key.asymmetricKeyType ?? "(unknown)"} (RSA or ECDSA)`);
}

/** Upstream's keyIDFromPublicKey. */
export function keyId(key: KeyObject): string {
  return createHash("sha256").update(key.export({ type: "spki", format: "der" })).digest("base64url");
}
