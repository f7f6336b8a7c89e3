// Drives the `tascer serve` page in headless Chromium (Debian's package)
// with playwright-core: the session list loads, search narrows it, a
// session's timeline shows its tool calls with their decisions, a
// tampered ledger shows as broken, the contracts view lists the
// contracts. Prints one JSON line of what it saw; exits 1 on the first
// check that fails. Takes screenshots into SCREENSHOT_DIR.
//
// Environment: VIEWER_URL (the URL `tascer serve` printed), EDIT_SESSION,
// TAMPERED_SESSION, SCREENSHOT_DIR, CHROMIUM (default /usr/bin/chromium),
// NODE_MODULES (where playwright-core is installed), USER_DATA_DIR (a
// fresh directory for the browser profile).
import { createRequire } from "node:module";
import path from "node:path";

const env = (name, fallback) => {
  const value = process.env[name] || fallback;
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

const require = createRequire(path.join(env("NODE_MODULES"), "noop.js"));
const { chromium } = require("playwright-core");

const url = env("VIEWER_URL");
const editSession = env("EDIT_SESSION");
const tamperedSession = env("TAMPERED_SESSION");
const shots = env("SCREENSHOT_DIR");
const TIMEOUT = 60_000;

function check(condition, what) {
  if (!condition) throw new Error("check failed: " + what);
}

const context = await chromium.launchPersistentContext(env("USER_DATA_DIR"), {
  executablePath: env("CHROMIUM", "/usr/bin/chromium"),
  headless: true,
  args: [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
  viewport: { width: 1280, height: 860 },
  timeout: TIMEOUT,
});
const seen = {};
try {
  const page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(TIMEOUT);
  const errors = [];
  page.on("pageerror", (err) => errors.push(String(err)));

  // The list.
  await page.goto(url);
  await page.waitForSelector("[data-testid=session-row]");
  seen.rows = await page.locator("[data-testid=session-row]").count();
  seen.address_keeps_token = new URL(page.url()).searchParams.has("token");
  check(seen.rows === 3, `3 sessions listed, saw ${seen.rows}`);
  check(!seen.address_keeps_token, "the token is taken out of the address bar");
  await page.waitForSelector("[data-testid=live] strong");
  await page.screenshot({ path: path.join(shots, "list.png"), fullPage: true });

  // Search.
  await page.fill("input[name=q]", "readme");
  await page.click("form.filters button[type=submit]");
  await page.waitForFunction(() => document.querySelectorAll("[data-testid=session-row]").length === 1);
  seen.search_rows = await page.locator("[data-testid=session-row]").count();
  check(seen.search_rows === 1, "a search for readme keeps one session");

  // A timeline, opened from the list.
  await page.goto(url.split("?")[0] + "#/");
  await page.click(`[data-session="${editSession}"] a`);
  await page.waitForSelector("[data-testid=call]");
  await page.waitForSelector("[data-testid=verify-badge]");
  seen.calls = await page.$$eval("[data-testid=call]", (cards) => cards.map((c) => ({
    tool: c.dataset.tool,
    status: c.dataset.status,
    decision: (c.querySelector("[data-testid=decision]") || {}).textContent || "",
  })));
  seen.edit_verified = await page.getAttribute("[data-testid=verify-badge]", "data-ok");
  const deny = seen.calls.find((c) => c.tool === "Bash" && c.status === "blocked");
  check(seen.calls.length === 4, `4 tool calls shown, saw ${seen.calls.length}`);
  check(deny && deny.decision.includes("deny") && deny.decision.includes("rule Bash(rm:*)"),
    "the refused Bash call shows its deny decision by the rule");
  check(seen.calls.some((c) => c.tool === "Write" && c.decision.includes("allow") && c.decision.includes("mode acceptEdits")),
    "the Write call shows its allow by the mode");
  check(seen.edit_verified === "true", "the untouched session's badge says verified");
  seen.diff_lines = await page.locator(".diff .add").count();
  check(seen.diff_lines > 0, "the Edit's diff is shown");
  await page.screenshot({ path: path.join(shots, "timeline.png"), fullPage: true });

  // A tampered ledger.
  await page.goto(url.split("?")[0] + "#/session/" + tamperedSession);
  await page.waitForFunction((id) => {
    const shown = document.querySelector("[data-testid=session-id]");
    return shown && shown.textContent === id && document.querySelector("[data-testid=verify-badge]");
  }, tamperedSession);
  seen.tampered_ok = await page.getAttribute("[data-testid=verify-badge]", "data-ok");
  seen.first_broken = await page.textContent("[data-testid=first-broken]");
  seen.badge_color = await page.$eval("[data-testid=verify-badge]", (b) => getComputedStyle(b).color);
  check(seen.tampered_ok === "false", "the tampered session's badge says broken");
  check(/#3 \(EditedEntry\)/.test(seen.first_broken), "the badge names entry 3 as the first broken one, edited");
  check(seen.badge_color === "rgb(179, 38, 30)", "the broken badge is red");
  await page.screenshot({ path: path.join(shots, "broken.png"), fullPage: false });

  // Contracts.
  await page.click("#nav-contracts");
  await page.waitForSelector("[data-testid=contract-row]");
  seen.contracts = await page.locator("[data-testid=contract-row]").count();
  check(seen.contracts === 2, "both contracts listed");
  seen.workers = await page.locator("[data-testid=worker]").count();
  const workers = Number(process.env.EXPECT_WORKERS || 0);
  check(seen.workers === workers, `${workers} worker(s) shown, saw ${seen.workers}`);
  await page.screenshot({ path: path.join(shots, "contracts.png"), fullPage: true });

  seen.page_errors = errors;
  check(errors.length === 0, "no script errors: " + errors.join("; "));
  console.log(JSON.stringify({ ok: true, seen }));
} catch (err) {
  console.log(JSON.stringify({ ok: false, error: String(err && err.message || err), seen }));
  process.exitCode = 1;
} finally {
  await context.close();
}
