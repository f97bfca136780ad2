// The platformd API reference: renders the OpenAPI 3.1 document served next to this page
// (`openapi.json`, relative, so the page works under any base path) without any dependency.
// Every request goes to this origin only (see the Content-Security-Policy of the page).
(function () {
  'use strict';

  var SPEC_URL = 'openapi.json';
  var METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
  var TOKEN_KEY = 'platformd-docs-token';
  var SCHEME_KEY = 'platformd-docs-scheme';
  var MAX_DEPTH = 8;

  var doc = null;

  // ---------------------------------------------------------------- DOM helpers

  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        var v = attrs[k];
        if (v === null || v === undefined || v === false) return;
        if (k === 'text') node.textContent = String(v);
        else if (k === 'class') node.className = v;
        else if (k.slice(0, 2) === 'on') node.addEventListener(k.slice(2), v);
        else node.setAttribute(k, v === true ? '' : String(v));
      });
    }
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }

  function append(node, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) child.forEach(function (c) { append(node, c); });
    else if (typeof child === 'string' || typeof child === 'number') node.appendChild(document.createTextNode(String(child)));
    else node.appendChild(child);
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function storageGet(key) {
    try { return window.sessionStorage.getItem(key) || ''; } catch (e) { return ''; }
  }

  function storageSet(key, value) {
    try {
      if (value) window.sessionStorage.setItem(key, value);
      else window.sessionStorage.removeItem(key);
    } catch (e) { /* storage disabled: the field still works for this page */ }
  }

  // A tiny inline-Markdown subset: paragraphs, `code`, **bold** and [links](target).
  function prose(text, cls) {
    if (!text) return null;
    var box = el('div', { class: 'prose' + (cls ? ' ' + cls : '') });
    String(text).split(/\n\s*\n/).forEach(function (para) {
      if (!para.trim()) return;
      var p = el('p');
      var re = /(`[^`]+`|\*\*[^*]+\*\*|\[[^\]]+\]\([^)\s]+\))/g;
      var last = 0, m;
      while ((m = re.exec(para))) {
        append(p, para.slice(last, m.index));
        var tok = m[0];
        if (tok[0] === '`') append(p, el('code', { text: tok.slice(1, -1) }));
        else if (tok[0] === '*') append(p, el('strong', { text: tok.slice(2, -2) }));
        else {
          var close = tok.indexOf('](');
          var label = tok.slice(1, close), target = tok.slice(close + 2, -1);
          if (/^(https?:|\/|#)/.test(target)) append(p, el('a', { href: target, rel: 'noopener noreferrer', target: target[0] === '#' ? null : '_blank', text: label }));
          else append(p, label);
        }
        last = m.index + tok.length;
      }
      append(p, para.slice(last));
      box.appendChild(p);
    });
    return box;
  }

  function anchorFor(id) {
    return 'op-' + String(id).replace(/[^A-Za-z0-9_-]+/g, '-');
  }

  // ---------------------------------------------------------------- $ref and schemas

  function pointer(ref) {
    if (typeof ref !== 'string' || ref[0] !== '#') return undefined;
    var cur = doc;
    var parts = ref.slice(1).split('/').slice(1);
    for (var i = 0; i < parts.length; i++) {
      var key = decodeURIComponent(parts[i]).replace(/~1/g, '/').replace(/~0/g, '~');
      if (cur === null || typeof cur !== 'object' || !(key in cur)) return undefined;
      cur = cur[key];
    }
    return cur;
  }

  // Follows `$ref`s (OpenAPI 3.1 allows sibling keywords, which win); returns the value and the
  // name of the last component referenced.
  function resolve(obj) {
    var name = null, guard = 0;
    while (obj && typeof obj === 'object' && typeof obj.$ref === 'string' && guard++ < 32) {
      var ref = obj.$ref;
      name = ref.split('/').pop();
      var target = pointer(ref);
      if (target === undefined) return { value: { description: 'Unresolved reference ' + ref }, name: name };
      var siblings = Object.assign({}, obj);
      delete siblings.$ref;
      obj = Object.keys(siblings).length ? Object.assign({}, target, siblings) : target;
    }
    return { value: obj, name: name };
  }

  function isNullSchema(s) {
    var r = resolve(s).value;
    return !!r && (r.type === 'null' || (Array.isArray(r.type) && r.type.length === 1 && r.type[0] === 'null'));
  }

  // A schema with refs resolved, allOf merged and `X | null` unions folded into `nullable`.
  function norm(schema, depth) {
    depth = depth || 0;
    var r = resolve(schema || {});
    var s = r.value && typeof r.value === 'object' ? r.value : {};
    var name = r.name;
    var nullable = !!s.nullable;
    if (Array.isArray(s.allOf) && depth < MAX_DEPTH) {
      var merged = Object.assign({}, s);
      delete merged.allOf;
      merged.properties = Object.assign({}, s.properties);
      merged.required = (s.required || []).slice();
      s.allOf.forEach(function (part) {
        var p = norm(part, depth + 1);
        if (s.allOf.length === 1 && !name) name = p.name;
        Object.assign(merged.properties, p.s.properties || {});
        merged.required = merged.required.concat(p.s.required || []);
        ['type', 'description', 'items', 'enum', 'format', 'additionalProperties', 'example', 'examples', 'anyOf', 'oneOf']
          .forEach(function (k) { if (merged[k] === undefined && p.s[k] !== undefined) merged[k] = p.s[k]; });
        if (p.nullable) nullable = true;
      });
      if (!Object.keys(merged.properties).length) delete merged.properties;
      s = merged;
    }
    ['anyOf', 'oneOf'].forEach(function (key) {
      if (!Array.isArray(s[key])) return;
      var rest = s[key].filter(function (v) { return !isNullSchema(v); });
      if (rest.length < s[key].length) nullable = true;
      if (rest.length === 1 && depth < MAX_DEPTH) {
        var inner = norm(rest[0], depth + 1);
        var outer = Object.assign({}, s);
        delete outer[key];
        s = Object.assign({}, inner.s, outer.description ? { description: outer.description } : {});
        name = name || inner.name;
        nullable = nullable || inner.nullable;
      } else {
        s = Object.assign({}, s);
        s[key] = rest;
      }
    });
    var types = Array.isArray(s.type) ? s.type.slice() : (s.type ? [s.type] : []);
    if (types.indexOf('null') >= 0) {
      nullable = true;
      types = types.filter(function (t) { return t !== 'null'; });
    }
    if (!types.length) {
      if (s.properties || s.additionalProperties) types = ['object'];
      else if (s.items) types = ['array'];
    }
    return { s: s, name: name, nullable: nullable, types: types };
  }

  function typeLabel(n, depth) {
    depth = depth || 0;
    var s = n.s, label;
    if (n.types.indexOf('array') >= 0 && depth < 4) {
      var item = s.items ? norm(s.items) : null;
      label = 'array of ' + (item ? (item.name || typeLabel(item, depth + 1)) : 'any');
    } else if (n.types.length) {
      label = n.types.join(' | ');
    } else if (s.oneOf) {
      label = 'one of';
    } else if (s.anyOf) {
      label = 'any of';
    } else if (s.const !== undefined) {
      label = 'constant';
    } else {
      label = 'any';
    }
    if (s.format) label += ' (' + s.format + ')';
    if (n.nullable) label += ' | null';
    return label;
  }

  function constraints(s) {
    var out = [];
    if (s.enum) out.push(el('span', { class: 'constraint' }, 'one of: ', s.enum.map(function (v, i) {
      return [i ? ', ' : '', el('code', { text: JSON.stringify(v) })];
    })));
    if (s.const !== undefined) out.push(el('span', { class: 'constraint' }, 'always ', el('code', { text: JSON.stringify(s.const) })));
    if (s.default !== undefined) out.push(el('span', { class: 'constraint' }, 'default ', el('code', { text: JSON.stringify(s.default) })));
    [['minimum', 'min'], ['maximum', 'max'], ['exclusiveMinimum', 'greater than'], ['exclusiveMaximum', 'less than'],
      ['minLength', 'min length'], ['maxLength', 'max length'], ['minItems', 'min items'], ['maxItems', 'max items'],
      ['pattern', 'pattern']].forEach(function (c) {
      if (s[c[0]] !== undefined && typeof s[c[0]] !== 'boolean') out.push(el('span', { class: 'constraint' }, c[1] + ' ', el('code', { text: String(s[c[0]]) })));
    });
    var ex = s.example !== undefined ? s.example : (Array.isArray(s.examples) && s.examples.length ? s.examples[0] : undefined);
    if (ex !== undefined && (typeof ex !== 'object' || ex === null)) out.push(el('span', { class: 'constraint' }, 'example ', el('code', { text: JSON.stringify(ex) })));
    if (s.deprecated) out.push(el('span', { class: 'badge badge-deprecated', text: 'deprecated' }));
    if (s.readOnly) out.push(el('span', { class: 'badge', text: 'read-only' }));
    if (s.writeOnly) out.push(el('span', { class: 'badge', text: 'write-only' }));
    return out;
  }

  // The part of a schema worth expanding below a row: object properties, array items that are
  // objects, unions, maps.
  function expandable(n) {
    var s = n.s;
    if (s.properties && Object.keys(s.properties).length) return true;
    if (s.oneOf || s.anyOf) return true;
    if (s.additionalProperties && typeof s.additionalProperties === 'object' && expandable(norm(s.additionalProperties))) return true;
    if (n.types.indexOf('array') >= 0 && s.items) return expandable(norm(s.items));
    return false;
  }

  // Renders a schema as nested tables; `seen` holds the component names on the way down, so
  // recursive schemas stop with a "see above" note.
  function schemaView(schema, depth, seen) {
    depth = depth || 0;
    seen = seen || [];
    var n = norm(schema);
    var s = n.s;
    var box = el('div', { class: 'schema' });
    if (n.name && seen.indexOf(n.name) >= 0) {
      append(box, el('p', { class: 'muted' }, '↻ ', el('code', { text: n.name }), ' (recursive, see above)'));
      return box;
    }
    if (depth > MAX_DEPTH) {
      append(box, el('p', { class: 'muted', text: '… nested too deep' }));
      return box;
    }
    var path = n.name ? seen.concat([n.name]) : seen;
    if (depth === 0) {
      append(box, el('div', { class: 'schema-head' },
        el('span', { class: 'type', text: typeLabel(n) }),
        n.name ? el('span', { class: 'schema-name', text: n.name }) : null,
        constraints(s)));
      append(box, prose(s.description, 'schema-desc'));
    }
    if (s.properties && Object.keys(s.properties).length) {
      var required = s.required || [];
      var tbody = el('tbody');
      Object.keys(s.properties).forEach(function (prop) {
        var pn = norm(s.properties[prop]);
        append(tbody, el('tr', null,
          el('td', { class: 'name' }, el('code', { text: prop }), required.indexOf(prop) >= 0 ? el('span', { class: 'required', title: 'required', text: 'required' }) : null),
          el('td', { class: 'type' }, typeLabel(pn), pn.name ? el('span', { class: 'schema-name', text: pn.name }) : null),
          el('td', { class: 'desc' }, prose(pn.s.description), constraints(pn.s))));
        if (expandable(pn)) {
          // The nested fields get a full-width row below their field.
          var isArray = pn.types.indexOf('array') >= 0 && !pn.s.properties;
          append(tbody, el('tr', { class: 'nested-row' }, el('td', { colspan: 3 },
            el('details', { class: 'nested', open: depth === 0 && !pn.name ? true : null },
              el('summary', null, el('code', { text: prop }), isArray ? ' item fields' : ' fields',
                pn.name ? el('span', { class: 'schema-name', text: pn.name }) : null),
              schemaView(isArray ? pn.s.items : s.properties[prop], depth + 1, isArray && pn.name ? path.concat([pn.name]) : path)))));
        }
      });
      append(box, el('table', { class: 'props' },
        el('thead', null, el('tr', null, el('th', { text: 'Field' }), el('th', { text: 'Type' }), el('th', { text: 'Description' }))),
        tbody));
    } else if (s.additionalProperties && typeof s.additionalProperties === 'object') {
      var vn = norm(s.additionalProperties);
      append(box, el('p', { class: 'muted' }, 'A map from names to ', el('span', { class: 'type', text: vn.name || typeLabel(vn) }), '.'));
      if (expandable(vn)) append(box, schemaView(s.additionalProperties, depth + 1, path));
    } else if (n.types.indexOf('array') >= 0 && s.items) {
      var itn = norm(s.items);
      if (expandable(itn)) {
        if (depth === 0) append(box, el('p', { class: 'muted' }, 'Each item:'));
        append(box, schemaView(s.items, depth + 1, path));
      }
    }
    var variants = s.oneOf || s.anyOf;
    if (variants) {
      var list = el('ol', { class: 'variants' });
      variants.forEach(function (v) {
        var vn = norm(v);
        append(list, el('li', null,
          el('div', { class: 'schema-head' }, el('span', { class: 'type', text: typeLabel(vn) }),
            vn.name ? el('span', { class: 'schema-name', text: vn.name }) : null, constraints(vn.s)),
          prose(vn.s.description),
          expandable(vn) ? schemaView(v, depth + 1, path) : null));
      });
      append(box, el('p', { class: 'muted', text: s.oneOf ? 'Exactly one of:' : 'Any of:' }), list);
    }
    return box;
  }

  function formatSample(format) {
    switch (format) {
      case 'date-time': return '2024-01-01T00:00:00Z';
      case 'date': return '2024-01-01';
      case 'email': return 'user@example.com';
      case 'uri': case 'url': case 'uri-reference': return location.origin + '/example';
      case 'uri-template': return location.origin + '/example{/id}';
      case 'uuid': return '00000000-0000-4000-8000-000000000000';
      default: return 'string';
    }
  }

  // A JSON sample built from examples, defaults, enums and types.
  function sample(schema, depth, seen) {
    depth = depth || 0;
    seen = seen || [];
    var n = norm(schema);
    var s = n.s;
    if (s.example !== undefined) return s.example;
    if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
    if (s.const !== undefined) return s.const;
    if (s.default !== undefined) return s.default;
    if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
    var kind = n.types[0];
    if (depth > MAX_DEPTH || (n.name && seen.indexOf(n.name) >= 0)) return kind === 'array' ? [] : (kind === 'object' ? {} : null);
    var path = n.name ? seen.concat([n.name]) : seen;
    if (!kind && (s.oneOf || s.anyOf)) return sample((s.oneOf || s.anyOf)[0], depth + 1, path);
    switch (kind) {
      case 'object': {
        var o = {};
        Object.keys(s.properties || {}).forEach(function (k) { o[k] = sample(s.properties[k], depth + 1, path); });
        if (!s.properties && s.additionalProperties && typeof s.additionalProperties === 'object') o.key = sample(s.additionalProperties, depth + 1, path);
        return o;
      }
      case 'array': return s.items ? [sample(s.items, depth + 1, path)] : [];
      case 'integer': return typeof s.minimum === 'number' ? s.minimum : 0;
      case 'number': return typeof s.minimum === 'number' ? s.minimum : 0;
      case 'boolean': return true;
      case 'string': return formatSample(s.format);
      default: return null;
    }
  }

  function mediaSample(media) {
    if (!media) return undefined;
    if (media.example !== undefined) return media.example;
    if (media.examples && typeof media.examples === 'object') {
      var first = Object.keys(media.examples)[0];
      if (first) {
        var ex = resolve(media.examples[first]).value;
        if (ex && ex.value !== undefined) return ex.value;
      }
    }
    return media.schema ? sample(media.schema) : undefined;
  }

  function jsonMedia(content) {
    if (!content) return null;
    var keys = Object.keys(content);
    var key = keys.filter(function (k) { return /json/.test(k); })[0] || keys[0];
    return key ? { type: key, media: content[key] || {} } : null;
  }

  function contentView(content) {
    var m = jsonMedia(content);
    if (!m) return null;
    var box = el('div', { class: 'content-view' });
    append(box, el('div', { class: 'media-type', text: m.type }));
    if (m.media.schema) append(box, schemaView(m.media.schema));
    var ex = mediaSample(m.media);
    if (ex !== undefined) {
      append(box, el('details', { class: 'sample' }, el('summary', { text: 'Example JSON' }),
        el('pre', { class: 'code', text: JSON.stringify(ex, null, 2) })));
    }
    return box;
  }

  // ---------------------------------------------------------------- operations

  function collectOperations() {
    var ops = [];
    var paths = doc.paths || {};
    Object.keys(paths).forEach(function (path) {
      var item = resolve(paths[path]).value || {};
      METHODS.forEach(function (method) {
        var op = item[method];
        if (!op || typeof op !== 'object') return;
        var params = {};
        (item.parameters || []).concat(op.parameters || []).forEach(function (p) {
          var r = resolve(p).value;
          if (r && r.name) params[r.in + ':' + r.name] = r;
        });
        ops.push({
          path: path, method: method, op: op,
          id: op.operationId || (method + ' ' + path),
          params: Object.keys(params).map(function (k) { return params[k]; }),
          tags: op.tags && op.tags.length ? op.tags : ['other']
        });
      });
    });
    return ops;
  }

  function listOf(v) {
    if (v === undefined || v === null) return [];
    if (Array.isArray(v)) return v.map(String);
    if (typeof v === 'object') return Object.keys(v).map(function (k) { return k + '=' + v[k]; });
    return String(v).split(',').map(function (x) { return x.trim(); }).filter(Boolean);
  }

  function securityView(op) {
    var reqs = op.security !== undefined ? op.security : (doc.security || []);
    var schemes = (doc.components && doc.components.securitySchemes) || {};
    var items = [];
    if (!reqs.length) items.push(el('span', { class: 'chip chip-open', text: 'no authentication' }));
    reqs.forEach(function (req) {
      var names = Object.keys(req || {});
      if (!names.length) {
        items.push(el('span', { class: 'chip chip-open', text: 'anonymous allowed' }));
        return;
      }
      items.push(el('span', { class: 'chip', title: names.map(function (nm) { var sc = resolve(schemes[nm]).value; return (sc && sc.description) || nm; }).join('; ') },
        names.map(function (nm) {
          var sc = resolve(schemes[nm]).value || {};
          var label = sc.type === 'http' ? (sc.scheme || nm) : nm;
          var scopes = (req[nm] || []).length ? ' (' + req[nm].join(', ') + ')' : '';
          return label + scopes;
        }).join(' + ')));
    });
    var rows = [el('div', { class: 'access-row' }, el('span', { class: 'access-label', text: 'Authentication' }), items)];
    var scopes = listOf(op['x-accepted-oauth-scopes']);
    if (op['x-accepted-oauth-scopes'] !== undefined) {
      rows.push(el('div', { class: 'access-row' }, el('span', { class: 'access-label', text: 'OAuth scopes' }),
        scopes.length ? scopes.map(function (sc) { return el('code', { class: 'chip chip-scope', text: sc }); }) : el('span', { class: 'muted', text: 'none needed' })));
    }
    var perms = listOf(op['x-accepted-service-permissions']);
    if (op['x-accepted-service-permissions'] !== undefined) {
      rows.push(el('div', { class: 'access-row' }, el('span', { class: 'access-label', text: 'Permissions' }),
        perms.length ? perms.map(function (p) { return el('code', { class: 'chip chip-perm', text: p }); }) : el('span', { class: 'muted', text: 'none needed' })));
    }
    return el('div', { class: 'access' }, rows);
  }

  function paramsView(params) {
    if (!params.length) return null;
    var tbody = el('tbody');
    params.forEach(function (p) {
      var n = norm(p.schema || (jsonMedia(p.content) || { media: {} }).media.schema || {});
      append(tbody, el('tr', null,
        el('td', { class: 'name' }, el('code', { text: p.name }), p.required ? el('span', { class: 'required', text: 'required' }) : null),
        el('td', { class: 'in', text: p.in }),
        el('td', { class: 'type', text: typeLabel(n) }),
        el('td', { class: 'desc' }, prose(p.description), constraints(n.s),
          p.deprecated ? el('span', { class: 'badge badge-deprecated', text: 'deprecated' }) : null)));
    });
    return el('section', { class: 'block' }, el('h4', { text: 'Parameters' }),
      el('table', { class: 'params' },
        el('thead', null, el('tr', null, el('th', { text: 'Name' }), el('th', { text: 'In' }), el('th', { text: 'Type' }), el('th', { text: 'Description' }))),
        tbody));
  }

  function bodyView(op) {
    if (!op.requestBody) return null;
    var rb = resolve(op.requestBody).value || {};
    return el('section', { class: 'block' },
      el('h4', null, 'Request body', rb.required ? el('span', { class: 'required', text: 'required' }) : null),
      prose(rb.description), contentView(rb.content));
  }

  function statusClass(code) {
    var c = String(code)[0];
    return 'status status-' + (/[1-5]/.test(c) ? c + 'xx' : 'default');
  }

  function responsesView(op) {
    var responses = op.responses || {};
    var codes = Object.keys(responses);
    if (!codes.length) return null;
    var box = el('section', { class: 'block' }, el('h4', { text: 'Responses' }));
    codes.forEach(function (code) {
      var r = resolve(responses[code]).value || {};
      var headers = r.headers || {};
      var headerNames = Object.keys(headers);
      var success = /^2/.test(code);
      var inner = el('div', { class: 'response-body' },
        headerNames.length ? el('table', { class: 'headers' },
          el('thead', null, el('tr', null, el('th', { text: 'Header' }), el('th', { text: 'Type' }), el('th', { text: 'Description' }))),
          el('tbody', null, headerNames.map(function (h) {
            var hv = resolve(headers[h]).value || {};
            return el('tr', null, el('td', { class: 'name' }, el('code', { text: h })),
              el('td', { class: 'type', text: typeLabel(norm(hv.schema || {})) }), el('td', { class: 'desc' }, prose(hv.description)));
          }))) : null,
        contentView(r.content));
      var hasDetail = headerNames.length || jsonMedia(r.content);
      box.appendChild(el('details', { class: 'response', open: success && hasDetail ? true : null },
        el('summary', null, el('span', { class: statusClass(code), text: code }), ' ', el('span', { text: r.description || '' }),
          hasDetail ? null : el('span', { class: 'muted', text: ' (no body)' })),
        hasDetail ? inner : null));
    });
    return box;
  }

  // ---------------------------------------------------------------- Try it

  function apiBase() {
    var server = doc.servers && doc.servers[0] && doc.servers[0].url;
    if (server && server.indexOf('{') < 0) {
      try {
        var u = new URL(server, location.href);
        if (u.origin === location.origin) return u.pathname.replace(/\/+$/, '');
      } catch (e) { /* fall back to the page's location */ }
    }
    return location.pathname.replace(/\/docs\/?$/, '').replace(/\/+$/, '');
  }

  function authorization() {
    var value = document.getElementById('auth-token').value.trim();
    if (!value) return null;
    if (/^(bearer|token|basic) /i.test(value)) return value;
    if (document.getElementById('auth-scheme').value === 'basic') {
      return 'Basic ' + (value.indexOf(':') >= 0 ? btoa(value) : value);
    }
    return 'Bearer ' + value;
  }

  function tryView(o) {
    var inputs = [];
    var fields = el('div', { class: 'try-fields' });
    o.params.filter(function (p) { return p.in === 'path' || p.in === 'query' || p.in === 'header'; }).forEach(function (p) {
      var n = norm(p.schema || {});
      var inputId = anchorFor(o.id) + '-' + p.in + '-' + p.name.replace(/[^A-Za-z0-9_-]+/g, '-');
      var placeholder = n.s.default !== undefined ? String(n.s.default) : (p.example !== undefined ? String(p.example) : (n.s.enum ? n.s.enum.join(' | ') : ''));
      var input = el('input', { id: inputId, type: 'text', placeholder: placeholder, autocomplete: 'off', spellcheck: 'false', 'data-in': p.in, 'data-name': p.name, required: p.in === 'path' ? true : null });
      inputs.push({ p: p, input: input });
      append(fields, el('label', { class: 'try-field', for: inputId },
        el('span', { class: 'try-label' }, el('code', { text: p.name }), el('span', { class: 'muted', text: ' ' + p.in + (p.required ? ', required' : '') })),
        input));
    });
    var bodyArea = null;
    if (o.op.requestBody && ['get', 'head'].indexOf(o.method) < 0) {
      var rb = resolve(o.op.requestBody).value || {};
      var m = jsonMedia(rb.content);
      var ex = m ? mediaSample(m.media) : undefined;
      bodyArea = el('textarea', { class: 'try-body', rows: 8, spellcheck: 'false', 'aria-label': 'JSON request body' });
      bodyArea.value = ex !== undefined ? JSON.stringify(ex, null, 2) : '';
      append(fields, el('label', { class: 'try-field try-field-body' }, el('span', { class: 'try-label', text: 'JSON body' }), bodyArea));
    }
    var urlPreview = el('code', { class: 'try-url' });
    var result = el('div', { class: 'try-result', 'aria-live': 'polite' });
    var send = el('button', { type: 'submit', class: 'send', text: 'Send' });

    function build() {
      var missing = [];
      var path = o.path.replace(/\{([^}]+)\}/g, function (all, name) {
        var hit = inputs.filter(function (x) { return x.p.in === 'path' && x.p.name === name; })[0];
        var v = hit ? hit.input.value.trim() : '';
        if (!v) { missing.push(name); return all; }
        return encodeURIComponent(v);
      });
      var query = new URLSearchParams();
      var headers = { Accept: 'application/json' };
      inputs.forEach(function (x) {
        var v = x.input.value.trim();
        if (!v) {
          if (x.p.required && x.p.in !== 'path') missing.push(x.p.name);
          return;
        }
        if (x.p.in === 'query') query.append(x.p.name, v);
        if (x.p.in === 'header') headers[x.p.name] = v;
      });
      var qs = query.toString();
      return { url: apiBase() + path + (qs ? '?' + qs : ''), headers: headers, missing: missing };
    }

    function refresh() {
      urlPreview.textContent = o.method.toUpperCase() + ' ' + build().url;
    }

    function show(parts) {
      clear(result);
      append(result, parts);
    }

    function submit(ev) {
      ev.preventDefault();
      var req = build();
      if (req.missing.length) {
        show(el('p', { class: 'try-error', text: 'Fill in: ' + req.missing.join(', ') }));
        return;
      }
      var auth = authorization();
      if (auth) req.headers.Authorization = auth;
      var init = { method: o.method.toUpperCase(), headers: req.headers, credentials: 'same-origin', cache: 'no-store' };
      if (bodyArea && bodyArea.value.trim()) {
        try {
          JSON.parse(bodyArea.value);
        } catch (e) {
          show(el('p', { class: 'try-error', text: 'The body is not valid JSON: ' + e.message }));
          return;
        }
        init.body = bodyArea.value;
        req.headers['Content-Type'] = 'application/json';
      }
      send.disabled = true;
      show(el('p', { class: 'muted', text: 'Sending…' }));
      var started = performance.now();
      fetch(req.url, init).then(function (resp) {
        return resp.text().then(function (text) {
          var ms = Math.round(performance.now() - started);
          var lines = [];
          resp.headers.forEach(function (v, k) { lines.push(k + ': ' + v); });
          lines.sort();
          var body = text;
          try { if (text) body = JSON.stringify(JSON.parse(text), null, 2); } catch (e) { /* not JSON: shown as is */ }
          show([
            el('div', { class: 'try-status' }, el('span', { class: statusClass(resp.status), text: String(resp.status) }), ' ',
              resp.statusText, el('span', { class: 'muted', text: ' · ' + ms + ' ms · ' + req.url })),
            el('details', { class: 'try-headers' }, el('summary', { text: 'Response headers (' + lines.length + ')' }),
              el('pre', { class: 'code', text: lines.join('\n') })),
            el('pre', { class: 'code try-response', text: body || '(empty body)' })
          ]);
        });
      }).catch(function (e) {
        show(el('p', { class: 'try-error', text: 'Request failed: ' + e.message }));
      }).then(function () { send.disabled = false; });
    }

    var form = el('form', { class: 'try-form', novalidate: true, onsubmit: submit, oninput: refresh },
      fields, el('div', { class: 'try-actions' }, send, urlPreview), result);
    var panel = el('details', { class: 'try' }, el('summary', { text: 'Try it' }), form);
    panel.addEventListener('toggle', refresh);
    return panel;
  }

  function operationView(o) {
    var op = o.op;
    var haystack = [o.id, o.method, o.path, op.summary, (o.tags || []).join(' ')].join(' ').toLowerCase();
    var ext = op.externalDocs && op.externalDocs.url;
    return el('article', { class: 'op', id: anchorFor(o.id), 'data-operation-id': o.id, 'data-search': haystack },
      el('header', { class: 'op-head' },
        el('span', { class: 'method method-' + o.method, text: o.method.toUpperCase() }),
        el('code', { class: 'path', text: o.path }),
        op.deprecated ? el('span', { class: 'badge badge-deprecated', text: 'deprecated' }) : null),
      el('h3', { class: 'op-summary' }, el('a', { href: '#' + anchorFor(o.id), class: 'self-link', text: op.summary || o.id })),
      el('div', { class: 'op-id' }, el('code', { text: o.id }),
        ext && /^(https?:|\/)/.test(ext) ? el('a', { href: ext, rel: 'noopener noreferrer', target: '_blank', text: 'reference' }) : null),
      prose(op.description),
      securityView(op),
      paramsView(o.params),
      bodyView(op),
      responsesView(op),
      tryView(o));
  }

  // ---------------------------------------------------------------- page

  function groupByTag(ops) {
    var order = (doc.tags || []).map(function (t) { return t.name; });
    var groups = {};
    ops.forEach(function (o) {
      var tag = o.tags[0];
      if (!groups[tag]) groups[tag] = [];
      groups[tag].push(o);
      if (order.indexOf(tag) < 0) order.push(tag);
    });
    return order.filter(function (t) { return groups[t]; }).map(function (t) {
      var info = (doc.tags || []).filter(function (x) { return x.name === t; })[0] || {};
      return { tag: t, description: info.description, ops: groups[t] };
    });
  }

  function render() {
    var info = doc.info || {};
    document.title = (info.title || 'API') + ' · API reference';
    document.getElementById('api-title').textContent = info.title || 'API reference';
    document.getElementById('api-version').textContent = info.version ? 'v' + info.version : '';

    var ops = collectOperations();
    var groups = groupByTag(ops);
    var content = document.getElementById('content');
    var sidebar = document.getElementById('sidebar');
    clear(content);
    clear(sidebar);

    var schemes = (doc.components && doc.components.securitySchemes) || {};
    content.appendChild(el('section', { class: 'intro' },
      el('h1', { text: info.title || 'API reference' }),
      prose(info.description),
      el('p', { class: 'muted' }, ops.length + ' operations · OpenAPI ' + (doc.openapi || '?') + ' · requests go to ',
        el('code', { text: location.origin + apiBase() + '/' }), ' · ', el('a', { href: SPEC_URL, text: 'openapi.json' })),
      Object.keys(schemes).length ? el('div', { class: 'schemes' }, Object.keys(schemes).map(function (nm) {
        var sc = resolve(schemes[nm]).value || {};
        return el('div', { class: 'scheme' }, el('code', { class: 'chip', text: nm }), ' ',
          sc.type === 'http' ? 'HTTP ' + (sc.scheme || '') : (sc.type || ''), sc.description ? ' — ' + sc.description : '');
      })) : null));

    var empty = el('p', { class: 'no-match', hidden: true, text: 'No operation matches the filter.' });
    groups.forEach(function (g) {
      var groupId = 'tag-' + g.tag.replace(/[^A-Za-z0-9_-]+/g, '-');
      var section = el('section', { class: 'tag-group', id: groupId, 'data-tag': g.tag },
        el('h2', { class: 'tag-title', text: g.tag }), prose(g.description, 'tag-desc'));
      var links = el('ul');
      g.ops.forEach(function (o) {
        section.appendChild(operationView(o));
        append(links, el('li', { 'data-target': o.id },
          el('a', { href: '#' + anchorFor(o.id), title: o.method.toUpperCase() + ' ' + o.path },
            el('span', { class: 'method method-small method-' + o.method, text: o.method.toUpperCase() }),
            el('span', { class: 'nav-label', text: o.op.summary || o.id }))));
      });
      content.appendChild(section);
      sidebar.appendChild(el('div', { class: 'nav-group', 'data-tag': g.tag },
        el('a', { class: 'nav-tag', href: '#' + groupId, text: g.tag }), links));
    });
    content.appendChild(empty);
    if (!ops.length) content.appendChild(el('p', { class: 'muted', text: 'The document lists no operations.' }));

    document.body.setAttribute('data-state', 'ready');
    if (location.hash) {
      var target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
      if (target) target.scrollIntoView();
    }
  }

  function applyFilter() {
    var terms = document.getElementById('search').value.toLowerCase().split(/\s+/).filter(Boolean);
    var visible = {};
    var count = 0;
    Array.prototype.forEach.call(document.querySelectorAll('article.op'), function (a) {
      var hay = a.getAttribute('data-search') || '';
      var show = terms.every(function (t) { return hay.indexOf(t) >= 0; });
      a.hidden = !show;
      if (show) { visible[a.getAttribute('data-operation-id')] = true; count++; }
    });
    Array.prototype.forEach.call(document.querySelectorAll('#sidebar li[data-target]'), function (li) {
      li.hidden = !visible[li.getAttribute('data-target')];
    });
    Array.prototype.forEach.call(document.querySelectorAll('.tag-group, .nav-group'), function (g) {
      g.hidden = !g.querySelector(g.classList.contains('tag-group') ? 'article.op:not([hidden])' : 'li:not([hidden])');
    });
    var none = document.querySelector('.no-match');
    if (none) none.hidden = count > 0;
  }

  function showError(detail) {
    var content = document.getElementById('content');
    clear(content);
    clear(document.getElementById('sidebar'));
    var url = new URL(SPEC_URL, location.href).pathname;
    content.appendChild(el('div', { class: 'load-error', id: 'load-error', role: 'alert' },
      el('h2', { text: 'Could not load the API description' }),
      el('p', null, 'Fetching ', el('code', { text: url }), ' failed: ', detail, '.'),
      el('p', { class: 'muted', text: 'This page renders the OpenAPI document platformd serves next to it. ' +
        'Check that the server is running and serves it, then reload.' })));
    document.body.setAttribute('data-state', 'error');
  }

  function setupControls() {
    var token = document.getElementById('auth-token');
    var scheme = document.getElementById('auth-scheme');
    token.value = storageGet(TOKEN_KEY);
    scheme.value = storageGet(SCHEME_KEY) || 'bearer';
    token.addEventListener('input', function () { storageSet(TOKEN_KEY, token.value); });
    scheme.addEventListener('change', function () { storageSet(SCHEME_KEY, scheme.value); });
    var search = document.getElementById('search');
    search.addEventListener('input', applyFilter);
    document.addEventListener('keydown', function (ev) {
      var t = ev.target && ev.target.tagName;
      if (ev.key === '/' && t !== 'INPUT' && t !== 'TEXTAREA' && t !== 'SELECT') {
        ev.preventDefault();
        search.focus();
      } else if (ev.key === 'Escape' && ev.target === search) {
        search.value = '';
        applyFilter();
      }
    });
  }

  function load() {
    setupControls();
    document.body.setAttribute('data-state', 'loading');
    fetch(SPEC_URL, { headers: { Accept: 'application/json' }, credentials: 'same-origin', cache: 'no-cache' })
      .then(function (resp) {
        if (!resp.ok) throw new Error('HTTP ' + resp.status + (resp.statusText ? ' ' + resp.statusText : ''));
        return resp.text();
      })
      .then(function (text) {
        var parsed;
        try { parsed = JSON.parse(text); } catch (e) { throw new Error('the response is not JSON (' + e.message + ')'); }
        if (!parsed || typeof parsed !== 'object' || typeof parsed.paths !== 'object') throw new Error('the response is not an OpenAPI document (no "paths")');
        doc = parsed;
        try {
          render();
        } catch (e) {
          throw new Error('rendering failed: ' + e.message);
        }
      })
      .catch(function (e) { showError(e.message || String(e)); });
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', load);
  else load();
})();
