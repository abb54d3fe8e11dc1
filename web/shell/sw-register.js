// Registers the service worker (sw.js) that keeps the page working offline after the first
// visit. It waits until the page has finished starting, so the worker's download of every file
// does not compete with the page's own, and mostly revalidates what the browser just fetched.
// Browsers offer service workers only over HTTPS and on localhost; elsewhere the page simply
// works online only.

function pageStarted() {
  const app = document.querySelector('[data-testid="app"]');
  if (!app || app.dataset.state !== "loading") return Promise.resolve();
  return new Promise((done) => {
    const watcher = new MutationObserver(() => {
      if (app.dataset.state !== "loading") {
        watcher.disconnect();
        done();
      }
    });
    watcher.observe(app, { attributes: true, attributeFilter: ["data-state"] });
  });
}

async function register() {
  if (document.readyState !== "complete") {
    await new Promise((done) => window.addEventListener("load", done, { once: true }));
  }
  await pageStarted();
  try {
    await navigator.serviceWorker.register(new URL("../sw.js", import.meta.url));
  } catch (err) {
    // Not fatal: the page works, just not offline.
    console.warn("tokenprism: no offline copy:", err);
  }
}

if ("serviceWorker" in navigator) register();
