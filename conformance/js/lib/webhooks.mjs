// A loopback webhook receiver whose every delivery is validated against the published webhook
// schemas (npm `@octokit/webhooks-schemas`, pinned in package.json): the schema of the delivery's
// event and action, `<event>$<action>` in the package's definitions, or `<event>$event` for
// events without actions; or, for the events listed in OPENAPI_EVENTS, the official OpenAPI
// webhook schema of the event and action (below). Every delivery is also validated against the
// server's own published schema of its event and action (the `webhooks` section of its
// `/openapi.json`, derived from its payload types), so what it publishes is what it sends; a
// delivery whose event and action it does not publish fails. A delivery that does not validate
// fails the test that waits for it.
import http from "node:http";
import { createRequire } from "node:module";
import Ajv from "ajv";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { MAIN_URL } from "./helpers.mjs";

const require = createRequire(import.meta.url);
const SCHEMA = structuredClone(require("@octokit/webhooks-schemas/schema.json"));

// Our event names where the package's definitions use the hosted vendor's: `X-Service-Event`
// `depbot_alert` is validated against the package's `dependabot_alert$<action>` definitions.
const SCHEMA_EVENT = { depbot_alert: "dependabot_alert" };

// `meta$deleted` is written for repository hooks: it requires `repository` and forbids
// `organization`. An organization hook's `meta` carries the organization and no repository
// (as every organization delivery does), so it is validated against that definition with
// `repository` optional and `organization` (the package's own definition) allowed; every other
// property, the hook's above all, is checked as published.
// The package's alert definitions carry the hosted vendor's own names where ours are neutral, as
// in the REST alert: the advisory's id is our `advisory_id` (the package: `ghsa_id`) and its
// identifier type `SSA` (the package: `GHSA`); and `created`'s sender is pinned to the vendor's
// own bot organization, where ours is the organization whose alert it is (any `user` shape).
{
  const advisory = SCHEMA.definitions["dependabot-alert"].properties.security_advisory;
  advisory.required = advisory.required.map((k) => (k === "ghsa_id" ? "advisory_id" : k));
  advisory.properties.advisory_id = advisory.properties.ghsa_id;
  delete advisory.properties.ghsa_id;
  const type = advisory.properties.identifiers.items.properties.type;
  type.enum = type.enum.map((t) => (t === "GHSA" ? "SSA" : t));
  SCHEMA.definitions["dependabot_alert$created"].properties.sender = { $ref: "#/definitions/user" };
}
{
  const meta = SCHEMA.definitions["meta$deleted"];
  meta.required = meta.required.filter((k) => k !== "repository");
  meta.properties.organization = { $ref: "#/definitions/organization" };
}

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addKeyword("tsAdditionalProperties");
ajv.addSchema(SCHEMA, "webhooks");

// The webhook section of the official OpenAPI description (npm `@octokit/openapi-webhooks`,
// pinned in package.json), for the events the package above lacks or describes in an older form:
// `repository_ruleset` (not in it at all), and `deployment` and `deployment_status` (its
// deployment workflow run forbids other properties yet lacks most a run has: the repositories,
// its URLs, `waiting`). Each webhook (`<event-with-dashes>-<action>`) is a $ref into
// `components/schemas`, so the components are one schema whose refs resolve in place. The
// description is OpenAPI 3.1, whose schemas are JSON Schema (`type: [..., "null"]`); an OpenAPI
// 3.0 `nullable` would be turned into that form.
const OPENAPI = require("@octokit/openapi-webhooks/generated/api.github.com.json");
const OPENAPI_EVENTS = new Set(["repository_ruleset", "deployment", "deployment_status"]);
{
  const nullable = (node) => {
    if (!node || typeof node !== "object") return;
    if (node.nullable === true && node.type && !Array.isArray(node.type)) node.type = [node.type, "null"];
    Object.values(node).forEach(nullable);
  };
  const components = structuredClone(OPENAPI.components);
  nullable(components);
  // The deployment events' run is written from one example: its repositories' `description`
  // and its `previous_attempt_url` may only be null. A repository with a description, or a
  // re-run's attempt, sends the string, as every other run does.
  for (const name of ["webhook-deployment-created", "webhook-deployment-status-created"]) {
    const run = components.schemas[name].properties.workflow_run.properties;
    for (const r of ["repository", "head_repository"]) run[r].properties.description = { type: ["string", "null"] };
    run.previous_attempt_url = { type: ["string", "null"] };
  }
  ajv.addFormat("int64", true);
  ajv.addSchema({ components }, "openapi-webhooks");
}

/** The key of a webhook in an OpenAPI description: `workflow-run-in-progress`, `ping`. */
const webhookKey = (event, action) => [event, action].filter(Boolean).join("-").replaceAll("_", "-");

/** The official OpenAPI webhook schema of an event and action, or null when it has none. */
export function openapiWebhookOf(event, action) {
  const ref = OPENAPI.webhooks[webhookKey(event, action)]?.post?.requestBody?.content?.["application/json"]?.schema?.$ref;
  return ref ? `openapi-webhooks${ref}` : null;
}

// The server's own description (JSON Schema 2020-12, as schemars writes it): its `webhooks`
// section names each payload's component; the components are one schema whose refs resolve in
// place, as above.
const OURS = await (await fetch(`${MAIN_URL}/openapi.json`)).json();
const ours = new Ajv2020({ strict: false, allErrors: true });
addFormats(ours);
for (const f of ["int64", "int32", "double", "float"]) ours.addFormat(f, true);
ours.addSchema({ components: OURS.components }, "ours");

/** The server's published schema of an event and action (`ours#/components/schemas/…`), or null. */
export function ourWebhookOf(event, action) {
  const post = OURS.webhooks?.[webhookKey(event, action)]?.post;
  const pinned = post?.parameters?.find((p) => p.name === "X-Service-Event")?.schema?.const;
  const ref = pinned === event ? post.requestBody?.content?.["application/json"]?.schema?.$ref : null;
  return ref ? `ours${ref}` : null;
}

const compiled = new Map();

/** The schema definition of an event and action, or null when the package has none. */
export function definitionOf(ourEvent, action) {
  const defs = SCHEMA.definitions;
  const event = SCHEMA_EVENT[ourEvent] ?? ourEvent;
  const name = action && defs[`${event}$${action}`] ? `${event}$${action}` : `${event}$event`;
  return defs[name] ? name : null;
}

/** The JSON payload of a delivery as received (json, or form's `payload` field). */
export function payloadOf({ headers, body }) {
  const text = body.toString();
  const json = headers["content-type"]?.startsWith("application/x-www-form-urlencoded")
    ? new URLSearchParams(text).get("payload")
    : text;
  return JSON.parse(json);
}

/** Validates `payload` against schema `name` of `validator`; throws naming every error. */
function validateAgainst(validator, name, event, payload) {
  if (!compiled.has(name)) compiled.set(name, validator.getSchema(name));
  const validate = compiled.get(name);
  if (!validate(payload)) {
    const errors = validate.errors.map((e) => `${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`);
    throw new Error(`${event}${payload.action ? `.${payload.action}` : ""} does not validate against ${name}:\n  ${errors.join("\n  ")}`);
  }
}

/**
 * Validates one delivery: {headers, body} as received (json or form), against the official
 * schema of its event and action and against the server's own. Returns the parsed payload;
 * throws naming the event, action and every schema error.
 */
export function validateDelivery(delivery) {
  const event = delivery.headers["x-service-event"];
  const payload = payloadOf(delivery);
  const definition = OPENAPI_EVENTS.has(event) ? null : definitionOf(event, payload.action);
  const name = OPENAPI_EVENTS.has(event) ? openapiWebhookOf(event, payload.action) : definition && `webhooks#/definitions/${definition}`;
  if (!name) throw new Error(`no published schema for webhook event ${event} (action ${payload.action})`);
  validateAgainst(ajv, name, event, payload);
  const own = ourWebhookOf(event, payload.action);
  if (!own) throw new Error(`the server publishes no webhook ${webhookKey(event, payload.action)} (event ${event}, action ${payload.action})`);
  validateAgainst(ours, own, event, payload);
  return payload;
}

/**
 * Starts a loopback receiver. `received` holds {headers, body, payload, error} for every delivery
 * (error: the validation failure, if any); `waitFor(pred)` waits for a delivery matching `pred`
 * and throws its validation error.
 */
export async function receiver() {
  const received = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const d = { headers: req.headers, body: Buffer.concat(chunks) };
      try {
        d.payload = payloadOf(d);
        validateDelivery(d);
      } catch (e) {
        d.error = e;
      }
      received.push(d);
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("ok");
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${server.address().port}/hook`;
  async function waitFor(pred, what, ms = 10000) {
    const deadline = Date.now() + ms;
    for (;;) {
      const d = received.find(pred);
      if (d) {
        if (d.error) throw d.error;
        return d;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  /** Every delivery so far validated (throws the first failure). */
  function assertAllValid() {
    const bad = received.filter((d) => d.error);
    if (bad.length) throw new Error(bad.map((d) => d.error.message).join("\n"));
  }
  return { url, received, waitFor, assertAllValid, close: () => server.close() };
}

/**
 * Two hooks with `*` on organization `org` — json with a secret, and form — at a new receiver.
 * `delivered(event, action?, pred?)` waits for that delivery (`action` matched when given) at both
 * hooks, each validated, and returns its payload; `close()` deletes the hooks and the receiver.
 */
export async function allEventHooks(owner, org) {
  const rx = await receiver();
  const hooks = [];
  for (const [content_type, secret] of [["json", "payload-secret"], ["form", undefined]]) {
    const config = { url: `${rx.url}?h=${content_type}-${hooks.length}-${Date.now()}`, content_type, ...(secret ? { secret } : {}) };
    const { data } = await owner.rest.orgs.createWebhook({ org, name: "web", events: ["*"], config });
    hooks.push(data);
  }
  async function delivered(event, action, pred = () => true) {
    const out = [];
    for (const h of hooks) {
      out.push(await rx.waitFor(
        (d) => d.headers["x-service-hook-id"] === String(h.id) && d.headers["x-service-event"] === event
          && (action === undefined || d.payload?.action === action) && d.payload && pred(d.payload),
        `${event}${action ? `.${action}` : ""} at hook ${h.id}`,
      ));
    }
    return out[0].payload;
  }
  async function close() {
    for (const h of hooks) await owner.rest.orgs.deleteWebhook({ org, hook_id: h.id }).catch(() => {});
    rx.close();
  }
  return { rx, hooks, delivered, close };
}
