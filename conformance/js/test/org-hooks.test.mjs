// Organization webhooks through octokit.rest.orgs.*: hooks, configuration, real signed
// deliveries to a local receiver, the deliveries list, redelivery and ping.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import http from "node:http";
import { after, before } from "node:test";
import { ORG, TOKENS, check, client, pushBranch, unique } from "../lib/helpers.mjs";

const owner = client({ token: TOKENS.owner });
const SECRET = "conformance-secret";
let server;
let receiverUrl;
const received = []; // {headers, body}

before(async () => {
  server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("ok");
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  receiverUrl = `http://127.0.0.1:${server.address().port}/hook`;
});

after(() => server.close());

async function waitFor(pred, what, ms = 10000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await pred();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function newHook(extra = {}) {
  const url = `${receiverUrl}?h=${unique("js")}`;
  const res = await owner.rest.orgs.createWebhook({
    org: ORG, name: "web", events: ["push"], config: { url, content_type: "json", secret: SECRET }, ...extra,
  });
  return res;
}

check("createWebhook answers 201 with the hook (secret masked, ping delivered)", ["org-hooks/create"], async () => {
  const res = await newHook();
  assert.equal(res.status, 201);
  const h = res.data;
  assert.equal(typeof h.id, "number");
  assert.equal(h.name, "web");
  assert.equal(h.type, "Organization");
  assert.deepEqual(h.events, ["push"]);
  assert.equal(h.active, true);
  assert.equal(h.config.secret, "********");
  assert.equal(h.config.content_type, "json");
  assert.equal(h.config.insecure_ssl, "0");
  assert.ok(h.ping_url.endsWith(`/orgs/${ORG}/hooks/${h.id}/pings`));
  const ping = await waitFor(() => received.find((r) => r.headers["x-service-hook-id"] === String(h.id)), "the ping");
  assert.equal(ping.headers["x-service-event"], "ping");
  const sig = "sha256=" + createHmac("sha256", SECRET).update(ping.body).digest("hex");
  assert.equal(ping.headers["x-service-signature-256"], sig);
});

check("createWebhook without config is a 422 RequestError", ["org-hooks/create"], async () => {
  await assert.rejects(owner.rest.orgs.createWebhook({ org: ORG, name: "web" }), (e) => e.status === 422);
});

check("listWebhooks and getWebhook", ["org-hooks/list", "org-hooks/get"], async () => {
  const { data: h } = await newHook();
  const list = await owner.paginate(owner.rest.orgs.listWebhooks, { org: ORG, per_page: 1 });
  assert.ok(list.some((x) => x.id === h.id));
  const got = await owner.rest.orgs.getWebhook({ org: ORG, hook_id: h.id });
  assert.equal(got.status, 200);
  assert.deepEqual(got.data, h);
  await assert.rejects(owner.rest.orgs.getWebhook({ org: ORG, hook_id: 999999999 }), (e) => e.status === 404);
});

check("updateWebhook replaces the secret (removed when not sent)", ["org-hooks/update"], async () => {
  const { data: h } = await newHook();
  const { data } = await owner.rest.orgs.updateWebhook({
    org: ORG, hook_id: h.id, events: ["push", "status"], active: true, config: { url: h.config.url, content_type: "form" },
  });
  assert.deepEqual(data.events, ["push", "status"]);
  assert.equal(data.config.content_type, "form");
  assert.equal(data.config.secret, undefined);
});

check("getWebhookConfigForOrg and updateWebhookConfigForOrg", ["org-hooks/get-config", "org-hooks/update-config"], async () => {
  const { data: h } = await newHook();
  const cfg = await owner.rest.orgs.getWebhookConfigForOrg({ org: ORG, hook_id: h.id });
  assert.deepEqual(cfg.data, { content_type: "json", insecure_ssl: "0", secret: "********", url: h.config.url });
  const up = await owner.rest.orgs.updateWebhookConfigForOrg({ org: ORG, hook_id: h.id, insecure_ssl: "1", content_type: "form" });
  assert.deepEqual(up.data, { content_type: "form", insecure_ssl: "1", secret: "********", url: h.config.url });
});

check("a push is delivered signed; listWebhookDeliveries, getWebhookDelivery, redeliverWebhookDelivery",
  ["org-hooks/list-deliveries", "org-hooks/get-delivery", "org-hooks/redeliver"], async () => {
    const { data: h } = await newHook();
    const c = await pushBranch();
    const push = await waitFor(
      () => received.find((r) => r.headers["x-service-hook-id"] === String(h.id) && r.headers["x-service-event"] === "push"),
      "the push delivery",
    );
    const body = JSON.parse(push.body.toString());
    assert.equal(body.after, c.sha);
    assert.equal(push.headers["x-service-hook-installation-target-type"], "organization");
    assert.equal(push.headers["x-service-signature-256"], "sha256=" + createHmac("sha256", SECRET).update(push.body).digest("hex"));
    const items = await waitFor(async () => {
      const { data } = await owner.rest.orgs.listWebhookDeliveries({ org: ORG, hook_id: h.id });
      return data.length >= 2 && data.every((d) => d.status !== "pending") ? data : null;
    }, "recorded deliveries");
    assert.equal(items[0].event, "push");
    assert.equal(items[0].guid, push.headers["x-service-delivery"]);
    assert.equal(items[0].status_code, 200);
    const paged = await owner.paginate(owner.rest.orgs.listWebhookDeliveries, { org: ORG, hook_id: h.id, per_page: 1 });
    assert.equal(paged.length, items.length, "octokit follows the cursor Link");
    const { data: full } = await owner.rest.orgs.getWebhookDelivery({ org: ORG, hook_id: h.id, delivery_id: items[0].id });
    assert.equal(full.request.headers["X-Service-Delivery"], items[0].guid);
    assert.equal(full.request.payload.after, c.sha);
    assert.equal(full.response.payload, "ok");
    const re = await owner.rest.orgs.redeliverWebhookDelivery({ org: ORG, hook_id: h.id, delivery_id: items[0].id });
    assert.equal(re.status, 202);
    await waitFor(
      () => received.filter((r) => r.headers["x-service-delivery"] === items[0].guid).length >= 2,
      "the redelivery",
    );
  });

check("pingWebhook answers 204 and sends a ping", ["org-hooks/ping"], async () => {
  const { data: h } = await newHook();
  const res = await owner.rest.orgs.pingWebhook({ org: ORG, hook_id: h.id });
  assert.equal(res.status, 204);
  await waitFor(
    () => received.filter((r) => r.headers["x-service-hook-id"] === String(h.id) && r.headers["x-service-event"] === "ping").length >= 2,
    "the second ping",
  );
});

check("deleteWebhook answers 204, then 404", ["org-hooks/delete"], async () => {
  const { data: h } = await newHook();
  const res = await owner.rest.orgs.deleteWebhook({ org: ORG, hook_id: h.id });
  assert.equal(res.status, 204);
  await assert.rejects(owner.rest.orgs.getWebhook({ org: ORG, hook_id: h.id }), (e) => e.status === 404);
});
