// The service worker that keeps the page working offline (registered by shell/sw-register.js).
//
// On install it downloads every file listed in the build's manifest.json (except the BPE tab's
// module and data and the general tokenizer module, stored on first use), checks each against its sha256, and stores them in a
// cache named after the build; from then on it answers the page's requests from that cache first. The build stamps its id into BUILD, so every new build
// is a changed sw.js: the browser installs it on the next visit, it fills a fresh cache, takes
// over, and deletes the previous build's cache.
//
// Responses are stored as the server sent them, headers included, so when a host sends
// COOP/COEP (cross-origin isolation) the page served from the cache keeps them.
//
// Everything is relative to the worker's scope (the page's folder): the copy works under any
// sub-path, and two copies on one origin keep separate caches.

const BUILD = "dev";
const SCOPE = new URL(self.registration.scope);
const CACHE_PREFIX = `tokenprism ${SCOPE.pathname} `;
const CACHE = CACHE_PREFIX + BUILD;
// The browser fetches the worker itself; the manifest is read fresh at every install.
const NOT_CACHED = new Set(["sw.js", "manifest.json"]);
// The BPE tab's module, the model files (~80 MB) and the module for tokenizer files the BERT
// module cannot read are not precached: each is stored in the same cache the first time the
// page fetches it, and answered from there afterwards.
const ON_DEMAND = ["pkg-bpe/", "data/bpe/", "data/models/", "pkg-general/"];
const onDemand = (path) => ON_DEMAND.some((prefix) => path.startsWith(prefix));

const resolve = (path) => new URL(path, SCOPE).href;

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}

// A dropped connection or a server error (5xx) is tried again, up to three times, before the
// whole offline copy is given up: one hiccup among the ~20 parallel downloads of the first
// visit must not cost the visitor the offline copy until their next visit.
async function fetchRetrying(path) {
  for (let attempt = 1; ; attempt++) {
    try {
      const response = await fetch(resolve(path), { cache: "no-cache" });
      if (response.status < 500 || attempt === 3) return response;
    } catch (err) {
      if (attempt === 3) throw err;
    }
    await new Promise((done) => setTimeout(done, 400 * attempt));
  }
}

// "no-cache" revalidates with the server (usually a cheap 304), so an HTTP cache still holding
// the previous build's copy cannot end up in this build's cache; the sha256 check catches a
// host that is halfway through an upload.
async function fetchChecked(path, entry) {
  const response = await fetchRetrying(path);
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  const body = await response.arrayBuffer();
  const digest = hex(await crypto.subtle.digest("SHA-256", body));
  if (body.byteLength !== entry.size || digest !== entry.sha256) {
    throw new Error(`${path}: does not match manifest.json (build ${BUILD})`);
  }
  // A fresh Response: same status and headers, without the "redirected" flag a host's
  // redirect would leave (browsers refuse redirected responses for page navigations).
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

async function precache() {
  const response = await fetch(resolve("manifest.json"), { cache: "no-cache" });
  if (!response.ok) throw new Error(`manifest.json: HTTP ${response.status}`);
  const manifest = await response.json();
  if (manifest.build !== BUILD) {
    // The host is between two uploads; the next visit tries again.
    throw new Error(`manifest.json is build ${manifest.build}, sw.js is build ${BUILD}`);
  }
  const cache = await caches.open(CACHE);
  try {
    await Promise.all(
      Object.entries(manifest.files)
        .filter(([path]) => !NOT_CACHED.has(path) && !onDemand(path))
        .map(async ([path, entry]) => cache.put(resolve(path), await fetchChecked(path, entry))),
    );
  } catch (err) {
    await caches.delete(CACHE);
    throw err;
  }
}

self.addEventListener("install", (event) => {
  // skipWaiting: the new build takes over as soon as it is cached; an open page of the old
  // build has already loaded everything it uses, and the next visit gets the new build.
  event.waitUntil(precache().then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) {
        if (name.startsWith(CACHE_PREFIX) && name !== CACHE) await caches.delete(name);
      }
      await self.clients.claim();
    })(),
  );
});

async function respond(request, target, event) {
  let key = request;
  if (request.mode === "navigate") {
    // The page itself, under whichever URL it was opened: the folder, index.html, with a
    // query string (the fragment never reaches the worker).
    const rest = target.pathname.slice(SCOPE.pathname.length);
    if (rest === "" || rest === "index.html") key = resolve("index.html");
  }
  const cache = await caches.open(CACHE);
  const hit = await cache.match(key);
  if (hit) return hit;
  const response = await fetch(request);
  if (response.status === 200 && onDemand(target.pathname.slice(SCOPE.pathname.length))) {
    // A copy goes to the cache while the page reads the original (its download progress).
    event.waitUntil(cache.put(key, response.clone()).catch(() => {}));
  }
  return response;
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const target = new URL(request.url);
  if (target.origin !== SCOPE.origin || !target.pathname.startsWith(SCOPE.pathname)) return;
  event.respondWith(respond(request, target, event));
});
