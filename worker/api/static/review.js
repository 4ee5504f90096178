// The review page's one script: the "read with the vision model" buttons. The server answers the
// stored read (200) or a read id (202) that is polled until the read ends; the HTML it returns
// went through the vision read's allow-list on the server (table markup only).
"use strict";

const csrf = document.querySelector('meta[name="csrf-token"]')?.content || "";

function agreementText(read) {
  const a = read.agreement;
  if (!a) return "";
  const parts = [];
  if (typeof a.teds === "number") parts.push(`agreement TEDS ${a.teds.toFixed(3)}`);
  if (typeof a.teds_struct === "number") parts.push(`structure ${a.teds_struct.toFixed(3)}`);
  if (typeof a.cell_match === "number") parts.push(`cells ${a.cell_match.toFixed(3)}`);
  if (a.same_shape !== undefined && a.same_shape !== null) parts.push(a.same_shape ? "same shape" : "different shape");
  return parts.join(" · ");
}

function show(card, read) {
  const panel = card.querySelector(".vision");
  const status = card.querySelector(".read-status");
  panel.hidden = false;
  if (read.status === "ok" && read.html) {
    card.querySelector(".vision-html").innerHTML = read.html;
    card.querySelector(".agreement").textContent = agreementText(read);
    status.textContent = "read";
  } else {
    const p = document.createElement("p");
    p.className = "error";
    p.textContent = read.reason || read.error || "the read failed";
    card.querySelector(".vision-html").replaceChildren(p);
    card.querySelector(".agreement").textContent = "";
    status.textContent = "failed";
  }
}

async function getJson(url, options) {
  const response = await fetch(url, { credentials: "same-origin", ...options });
  const body = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  return { response, body };
}

async function readTable(button) {
  const card = button.closest(".table-card");
  const status = card.querySelector(".read-status");
  button.disabled = true;
  status.textContent = "reading…";
  try {
    const force = button.dataset.force === "true" ? "?force=true" : "";
    let { response, body } = await getJson(button.dataset.url + force, {
      method: "POST",
      headers: { "X-CSRF-Token": csrf },
    });
    if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
    let read = body.read;
    if (response.status === 202) {
      const pollUrl = body.links.poll;
      const deadline = Date.now() + 300000;
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        ({ response, body } = await getJson(pollUrl, {}));
        if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
        if (body.status !== "queued" && body.status !== "running") break;
        if (Date.now() > deadline) throw new Error("no answer after 5 minutes");
        status.textContent = `${body.status}…`;
      }
      read = body;
    }
    show(card, read);
    button.dataset.force = "true";
    button.textContent = "Read again with the vision model";
  } catch (err) {
    status.textContent = `error: ${err.message}`;
  } finally {
    button.disabled = false;
  }
}

document.querySelectorAll("button.read").forEach((button) => {
  button.addEventListener("click", () => readTable(button));
});

// --- corrections: each cell beside its box on the crop, edited in place, saved as a new version ---
// The grid is built from the table record (JSON) with textContent only, so no cell text is ever
// parsed as markup. Boxes are the record's cell boxes, in crop pixels, scaled to the shown image.

function slotKey(row, col) {
  return `${row}:${col}`;
}

function buildGrid(record) {
  const grid = record.grid;
  const headerRows = record.serialisations ? record.serialisations.header_rows : grid.header_rows;
  const byRow = new Map();
  for (const cell of grid.cells) {
    if (!byRow.has(cell.row)) byRow.set(cell.row, []);
    byRow.get(cell.row).push(cell);
  }
  const table = document.createElement("table");
  for (let r = 0; r < grid.n_rows; r++) {
    const tr = document.createElement("tr");
    for (const cell of (byRow.get(r) || []).sort((a, b) => a.col - b.col)) {
      const td = document.createElement(r < headerRows ? "th" : "td");
      td.textContent = cell.text || "";
      td.contentEditable = "true";
      td.spellcheck = false;
      td.dataset.row = cell.row;
      td.dataset.col = cell.col;
      td.dataset.text = cell.text || "";
      if (cell.rowspan > 1) td.rowSpan = cell.rowspan;
      if (cell.colspan > 1) td.colSpan = cell.colspan;
      tr.appendChild(td);
    }
    table.appendChild(tr);
  }
  return table;
}

function placeBoxes(editor) {
  const card = editor.closest(".table-card");
  const img = card.querySelector(".crop img");
  const layer = card.querySelector(".crop .boxes");
  if (!img || !layer || !editor.record || !img.naturalWidth) return;
  const scale = img.clientWidth / img.naturalWidth;
  layer.replaceChildren();
  for (const cell of editor.record.grid.cells) {
    if (!cell.bbox) continue;
    const [x0, y0, x1, y1] = cell.bbox;
    const box = document.createElement("span");
    box.className = "box";
    box.dataset.row = cell.row;
    box.dataset.col = cell.col;
    box.title = cell.text || "";
    box.style.left = `${x0 * scale}px`;
    box.style.top = `${y0 * scale}px`;
    box.style.width = `${Math.max(1, (x1 - x0) * scale)}px`;
    box.style.height = `${Math.max(1, (y1 - y0) * scale)}px`;
    layer.appendChild(box);
  }
}

function highlight(card, key) {
  card.querySelectorAll(".hl").forEach((el) => el.classList.remove("hl"));
  if (!key) return;
  const [row, col] = key.split(":");
  card
    .querySelectorAll(`.edit-grid [data-row="${row}"][data-col="${col}"], .boxes [data-row="${row}"][data-col="${col}"]`)
    .forEach((el) => el.classList.add("hl"));
}

function keyOf(el) {
  const hit = el && el.closest && el.closest("[data-row][data-col]");
  return hit ? slotKey(hit.dataset.row, hit.dataset.col) : null;
}

async function showChunks(editor) {
  const out = editor.querySelector(".chunk-text");
  const { response, body } = await getJson(`${editor.dataset.chunks}?t=${Date.now()}`, {});
  if (!response.ok) {
    out.textContent = body.error || `HTTP ${response.status}`;
    return;
  }
  const mine = body.chunks.filter((c) => (c.parts || [c.table_id]).includes(editor.dataset.table));
  out.textContent = mine.map((c) => c.text).join("\n\n---\n\n");
}

async function loadRecord(editor) {
  const { response, body } = await getJson(`${editor.dataset.record}?t=${Date.now()}`, {});
  if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
  editor.record = body;
  const holder = editor.querySelector(".edit-grid");
  holder.replaceChildren(buildGrid(body));
  const review = body.review || {};
  editor.version = review.version || 0;
  editor.querySelector(".version").textContent = `version ${editor.version}`;
  editor.querySelector(".verified-badge").hidden = !review.verified;
  editor.querySelector(".verified").checked = !!review.verified;
  const headers = editor.querySelector(".header-rows");
  headers.max = Math.max(0, body.grid.n_rows - 1);
  headers.value = body.serialisations ? body.serialisations.header_rows : body.grid.header_rows;
  headers.dataset.initial = headers.value;
  placeBoxes(editor);
}

async function saveEdit(editor) {
  const status = editor.querySelector(".save-status");
  const button = editor.querySelector("button.save");
  const cells = [];
  editor.querySelectorAll(".edit-grid [data-row]").forEach((td) => {
    const text = td.textContent.replace(/\s+/g, " ").trim();
    if (text !== td.dataset.text) cells.push({ row: Number(td.dataset.row), col: Number(td.dataset.col), text });
  });
  const headers = editor.querySelector(".header-rows");
  const verified = editor.querySelector(".verified").checked;
  const body = { base_version: editor.version, cells, verified };
  if (headers.value !== headers.dataset.initial) body.header_rows = Number(headers.value);
  const reviewer = editor.querySelector(".reviewer").value.trim();
  if (reviewer) body.reviewer = reviewer;
  button.disabled = true;
  status.textContent = "saving…";
  try {
    const { response, body: answer } = await getJson(editor.dataset.edits, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(answer.error || `HTTP ${response.status}`);
    await loadRecord(editor);
    await showChunks(editor);
    status.textContent = answer.unchanged ? "nothing changed" : `saved version ${answer.version}`;
  } catch (err) {
    status.textContent = `error: ${err.message}`;
  } finally {
    button.disabled = false;
  }
}

async function setupEditor(editor) {
  const card = editor.closest(".table-card");
  const img = card.querySelector(".crop img");
  // listen before awaiting anything: a crop that finishes loading while the record or the
  // chunks are fetched would otherwise never get its boxes (placeBoxes waits for both)
  img.addEventListener("load", () => placeBoxes(editor));
  try {
    await loadRecord(editor);
    await showChunks(editor);
  } catch (err) {
    editor.querySelector(".edit-grid").textContent = `error: ${err.message}`;
    return;
  }
  placeBoxes(editor);
  window.addEventListener("resize", () => placeBoxes(editor));
  const grid = editor.querySelector(".edit-grid");
  grid.addEventListener("mouseover", (e) => highlight(card, keyOf(e.target)));
  grid.addEventListener("focusin", (e) => highlight(card, keyOf(e.target)));
  grid.addEventListener("input", (e) => {
    const td = e.target.closest("[data-row]");
    if (td) td.classList.toggle("changed", td.textContent.trim() !== td.dataset.text);
  });
  const layer = card.querySelector(".crop .boxes");
  layer.addEventListener("mouseover", (e) => highlight(card, keyOf(e.target)));
  layer.addEventListener("click", (e) => {
    const key = keyOf(e.target);
    if (!key) return;
    const [row, col] = key.split(":");
    const td = grid.querySelector(`[data-row="${row}"][data-col="${col}"]`);
    if (td) td.focus();
  });
  editor.querySelector("button.save").addEventListener("click", () => saveEdit(editor));
}

document.querySelectorAll(".editor").forEach((editor) => setupEditor(editor));
