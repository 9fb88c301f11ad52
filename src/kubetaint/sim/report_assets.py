"""The HTML report's stylesheet and script, inlined in every page (nothing is fetched).

The script unpacks the timeline's records (base64 of gzipped JSON, see
`report_data.pack_records`) with the browser's own `DecompressionStream`, then fills the table a
page of rows at a time as the filters ask (preset by the address:
`report.html#reason=Evicted&kind=Pod&q=node-3`). It marks the page: `data-ready` on `<body>`
once the table is filled (and `data-ready-ms`, the milliseconds since navigation), `data-errors`
with the message of any script error.
"""

from __future__ import annotations

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1000px;
padding:0 12px;color:#1d1d1d;background:#fff}
h1{font-size:22px}h2{font-size:17px;margin-top:32px;border-bottom:1px solid #ddd;padding-bottom:4px}
.cards{display:flex;flex-wrap:wrap;gap:10px}.card{border:1px solid #ddd;border-radius:6px;padding:8px 14px}
.card b{display:block;font-size:20px}.card span{font-size:12px;color:#555}
.legend{display:flex;flex-wrap:wrap;gap:14px;font-size:12px;margin:8px 0}
.key{display:inline-flex;align-items:center;gap:5px}
svg.chart{display:block;max-width:100%;height:auto;overflow:visible}
svg text{font-size:11px;font-family:system-ui,sans-serif;fill:#333}svg text.zone{font-weight:600}
details.zone{margin:6px 0}details.zone summary{cursor:pointer;font-size:13px}
table{border-collapse:collapse;font-size:12px;width:100%}
td,th{padding:3px 8px;text-align:left;vertical-align:top;border-bottom:1px solid #eee}
th{background:#f6f6f6;position:sticky;top:0}
td:first-child{white-space:nowrap;font-variant-numeric:tabular-nums}
.filters{display:flex;flex-wrap:wrap;gap:14px;align-items:center;margin:8px 0;font-size:13px}
.filters input{width:16em}#more{margin:10px 0}
"""

SCRIPT = r"""
(function () {
  "use strict";
  var body = document.body;
  function fail(message) {
    body.dataset.errors = (body.dataset.errors || "") + message + "\n";
  }
  window.addEventListener("error", function (e) { fail(String(e.message || e)); });
  window.addEventListener("unhandledrejection", function (e) { fail(String(e.reason)); });

  var COLUMNS = ["reason", "kind", "namespace", "name", "node", "message"];
  var PAGE = 200;

  function trim(value) {
    var text = value.toFixed(9).replace(/0+$/, "").replace(/\.$/, "");
    return text;
  }
  // Go's Duration.String, as the rest of kubetaint prints times.
  function duration(ms) {
    var ns = Math.round(ms * 1e6);
    if (ns === 0) { return "0s"; }
    var sign = ns < 0 ? "-" : "";
    ns = Math.abs(ns);
    if (ns < 1e9) {
      if (ns >= 1e6) { return sign + trim(ns / 1e6) + "ms"; }
      if (ns >= 1e3) { return sign + trim(ns / 1e3) + "\u00b5s"; }
      return sign + ns + "ns";
    }
    var hours = Math.floor(ns / 3.6e12);
    var rest = ns - hours * 3.6e12;
    var minutes = Math.floor(rest / 6e10);
    var seconds = trim((rest - minutes * 6e10) / 1e9) + "s";
    if (hours) { return sign + hours + "h" + minutes + "m" + seconds; }
    if (minutes) { return sign + minutes + "m" + seconds; }
    return sign + seconds;
  }

  function filled(message, namespace, name, node) {
    if (message.charAt(0) === "\u0000") { return message.slice(1); }
    return message.split("\u0003").join(node).split("\u0002").join(name)
      .split("\u0001").join(namespace + "/" + name);
  }

  function unpack(text) {
    var raw = atob(text.trim());
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) { bytes[i] = raw.charCodeAt(i); }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }

  function records(payload) {
    var columns = payload.columns, tables = payload.tables, out = [], t = 0;
    for (var row = 0; row < columns.dt.length; row++) {
      t += columns.dt[row];
      var record = { t: t };
      for (var c = 0; c < COLUMNS.length; c++) {
        record[COLUMNS[c]] = tables[COLUMNS[c]][columns[COLUMNS[c]][row]];
      }
      record.message = filled(record.message, record.namespace, record.name, record.node);
      record.object = [record.kind, record.namespace, record.name].filter(Boolean).join("/");
      record.text = (record.object + " " + record.node + " " + record.message).toLowerCase();
      out.push(record);
    }
    return out;
  }

  function cell(row, text) {
    var td = document.createElement("td");
    td.textContent = text;
    row.appendChild(td);
  }

  function start(all) {
    var tbody = document.getElementById("rows");
    var more = document.getElementById("more");
    var count = document.getElementById("f-count");
    var reason = document.getElementById("f-reason");
    var kind = document.getElementById("f-kind");
    var text = document.getElementById("f-text");
    var matching = all, shown = 0;

    function showMore() {
      var stop = Math.min(matching.length, shown + PAGE);
      var fragment = document.createDocumentFragment();
      for (; shown < stop; shown++) {
        var r = matching[shown], tr = document.createElement("tr");
        tr.dataset.reason = r.reason;
        cell(tr, duration(r.t)); cell(tr, r.reason); cell(tr, r.object);
        cell(tr, r.node); cell(tr, r.message);
        fragment.appendChild(tr);
      }
      tbody.appendChild(fragment);
      more.hidden = shown >= matching.length;
      count.textContent = matching.length.toLocaleString("en") + " of " + all.length.toLocaleString("en") +
        " records" + (shown < matching.length ? ", first " + shown.toLocaleString("en") + " shown" : "");
    }

    function apply() {
      var wantReason = reason.value, wantKind = kind.value, wantText = text.value.trim().toLowerCase();
      matching = all.filter(function (r) {
        return (!wantReason || r.reason === wantReason) && (!wantKind || r.kind === wantKind) &&
          (!wantText || r.text.indexOf(wantText) >= 0);
      });
      tbody.textContent = "";
      shown = 0;
      showMore();
    }

    // filters may come with the address: report.html#reason=Evicted&kind=Pod&q=node-3
    var preset = new URLSearchParams(location.hash.slice(1));
    reason.value = preset.get("reason") || "";
    kind.value = preset.get("kind") || "";
    text.value = preset.get("q") || "";
    reason.addEventListener("change", apply);
    kind.addEventListener("change", apply);
    text.addEventListener("input", apply);
    more.addEventListener("click", showMore);
    apply();
    body.dataset.readyMs = String(Math.round(performance.now()));
    body.dataset.ready = "yes";
  }

  var packed = document.getElementById("records");
  unpack(packed.textContent).then(records).then(start).catch(function (e) { fail(String(e)); });
})();
"""
