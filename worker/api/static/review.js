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
