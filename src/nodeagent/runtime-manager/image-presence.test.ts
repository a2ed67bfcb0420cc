// ImagePresence: a present image is believed for the window and then asked
// again; forgetting one (a failed create) asks again at once; the map is bounded.

import assert from "node:assert/strict";
import { test } from "node:test";
import { ImagePresence } from "./image-presence.js";

test("a confirmed image is known within the window, not after it, and not once forgotten", () => {
  let now = 0;
  const images = new ImagePresence(10_000, () => now);
  assert.equal(images.known("busybox"), false, "never confirmed");
  images.confirm("busybox");
  now = 9_999;
  assert.equal(images.known("busybox"), true);
  assert.equal(images.known("alpine"), false, "another image is not");
  now = 10_000;
  assert.equal(images.known("busybox"), false, "the window is over: ask the runtime again");
  images.confirm("busybox");
  images.forget("busybox");
  assert.equal(images.known("busybox"), false);
});

test("at most 256 images are remembered, the oldest confirmation dropped first", () => {
  const images = new ImagePresence(10_000, () => 0);
  for (let i = 0; i <= 256; i++) images.confirm(`image-${i}`);
  assert.equal(images.known("image-0"), false);
  assert.equal(images.known("image-1"), true);
  assert.equal(images.known("image-256"), true);
});
