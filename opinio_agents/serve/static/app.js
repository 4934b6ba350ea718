// opinio web page: vanilla JS over the `opinio serve` HTTP API (same origin, relative URLs).
//
// Review text, entity names, aspect names and model answers are untrusted: every one of them
// reaches the page through textContent / createTextNode (the el() helper below), never parsed as HTML.
"use strict";

(() => {
  const MAX_HISTORY = 20; // chat messages sent back with each question
  const MAX_MESSAGE = 4000; // the server's per-message limit
  const MAX_CHIPS = 12;

  const $ = (id) => document.getElementById(id);
  const state = {
    entity: null, // the selected entity id (string)
    detail: null, // GET entities/{id}
    llm: false, // whether the server has a chat model
    aspects: [], // [{aspect, mentions, positive, negative, neutral, total_reviews, custom}]
    results: new Map(), // aspect -> {highlights: [], failure, support, hits, loading}
    selected: null,
    chat: [], // [{role, content}]
    chatBusy: false,
    generation: 0, // bumps on every entity switch; stale responses are dropped
    streams: new Set(), // AbortControllers of the highlight streams in flight
  };

  // --------------------------------------------------------------------------- DOM helpers
  /** Build an element: attributes are set as attributes/properties, children are nodes or plain text. */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = String(value);
      else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function notice(message) {
    const box = $("notice");
    if (!message) {
      box.hidden = true;
      box.textContent = "";
      return;
    }
    box.textContent = message;
    box.hidden = false;
  }

  const fmt = (n) => Number(n || 0).toLocaleString("en-US");
  /** "1 review", "2 reviews", "1,234 reviews". */
  const plural = (n, one, many) => `${fmt(n)} ${Number(n) === 1 ? one : many || `${one}s`}`;

  // Python's round() (half to even), so the page says exactly what Support.describe() says.
  function pyRound(x) {
    const floor = Math.floor(x);
    const diff = x - floor;
    if (diff > 0.5) return floor + 1;
    if (diff < 0.5) return floor;
    return floor % 2 === 0 ? floor : floor + 1;
  }

  /** "mentioned in 143 of 1,500 reviews, 81% negative" (the same words as models.Support.describe). */
  function describeSupport(s) {
    if (!s || !s.reviews) return "not mentioned in any review";
    const ofTotal = s.total_reviews ? ` of ${fmt(s.total_reviews)}` : "";
    let lean;
    if (!s.positive && !s.negative) lean = "no clear sentiment";
    else if (s.negative > s.positive) lean = `${pyRound((100 * s.negative) / s.reviews)}% negative`;
    else lean = `${pyRound((100 * s.positive) / s.reviews)}% positive`;
    const noun = (s.total_reviews || s.reviews) === 1 ? "review" : "reviews";
    let text = `mentioned in ${fmt(s.reviews)}${ofTotal} ${noun}, ${lean}`;
    if (s.weighting && s.weighting !== "count") text += ` (weighted: ${s.weighting})`;
    if (s.since || s.until) text += ` (${s.since || "…"} to ${s.until || "…"})`;
    return text;
  }

  /** The review id inside a sentence id "{entity}:{review}:{index}" (":" and "%" in ids are %3A / %25). */
  function reviewIdOf(sentenceId) {
    const parts = String(sentenceId).split(":");
    if (parts.length < 3) return null;
    return parts[1].replace(/%(25|3A)/gi, (m) => (m.toUpperCase() === "%25" ? "%" : ":"));
  }

  // --------------------------------------------------------------------------- HTTP
  const params = new URLSearchParams(window.location.search);
  const apiKey = params.get("api_key") || "";
  if (apiKey) {
    // The server has set its HttpOnly cookie for this key; keep the key out of the address bar and history.
    params.delete("api_key");
    const rest = params.toString();
    window.history.replaceState(null, "", window.location.pathname + (rest ? `?${rest}` : "") + window.location.hash);
  }

  class ApiError extends Error {
    constructor(status, body) {
      const info = (body && body.error) || {};
      super(info.message || `request failed with status ${status}`);
      this.status = status;
      this.type = info.type || "error";
      this.field = info.field || null;
    }
  }

  async function request(path, options = {}) {
    const headers = new Headers(options.headers || {});
    headers.set("Accept", options.accept || "application/json");
    if (apiKey) headers.set("X-API-Key", apiKey);
    const response = await fetch(path, { ...options, headers, credentials: "same-origin" });
    if (!response.ok) {
      let body = null;
      try {
        body = await response.json();
      } catch (_) {
        body = null;
      }
      const error = new ApiError(response.status, body);
      if (response.status === 401) {
        error.message = `${error.message} (open this page as ?api_key=YOUR_KEY once)`;
      }
      throw error;
    }
    return response;
  }

  const getJSON = async (path, options) => (await request(path, options)).json();
  const entityPath = (suffix) => `entities/${encodeURIComponent(state.entity)}${suffix || ""}`;

  /** Server-sent events from a fetch() response (works for POST, unlike EventSource). */
  async function* sseEvents(response) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    const parse = (block) => {
      let event = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (!line || line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "event") event = value;
        else if (field === "data") data.push(value);
      }
      if (!data.length) return null;
      const raw = data.join("\n");
      try {
        return { event, data: JSON.parse(raw) };
      } catch (_) {
        return { event, data: raw };
      }
    };
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      buffer = buffer.replace(/\r\n?/g, "\n");
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const item = parse(buffer.slice(0, cut));
        buffer = buffer.slice(cut + 2);
        if (item) yield item;
      }
      if (done) break;
    }
    if (buffer.trim()) {
      const item = parse(buffer);
      if (item) yield item;
    }
  }

  // --------------------------------------------------------------------------- entities
  async function loadService() {
    try {
      const health = await getJSON("healthz");
      state.llm = Boolean(health.llm);
      $("service").textContent =
        `${plural(health.entities, "entity", "entities")} indexed · ` +
        (state.llm ? "chat: language model" : "chat: quotes from the reviews (no language model)");
    } catch (error) {
      notice(error.message);
    }
    $("chat-mode").textContent = state.llm
      ? "Answers come from a language model that reads only the matching review sentences; every claim cites them."
      : "No language model is configured: answers quote the most relevant review sentences.";
  }

  /** The first screen: one card per indexed entity (or how to index one), shown until an entity is picked. */
  function renderEntityCards(entities) {
    const list = $("entity-cards");
    clear(list);
    $("welcome-status").textContent = entities.length
      ? `${plural(entities.length, "entity is", "entities are")} indexed. Open one:`
      : "No entity is indexed yet. Index reviews with “opinio index reviews.json --store DIR”, then start " +
        "“opinio serve --store DIR” (or send a file to POST /index).";
    for (const item of entities) {
      const name = item.name || `Entity ${item.entity_id}`;
      const card = el(
        "button",
        {
          type: "button",
          class: "entity-card",
          "data-entity": item.entity_id,
          onclick: () => {
            $("entity").value = item.entity_id;
            selectEntity(item.entity_id);
          },
        },
        el("span", { class: "card-name" }, name),
        el("span", { class: "card-meta" }, `entity ${item.entity_id} · ${plural(item.reviews, "review")}`),
        el("span", { class: "card-go", "aria-hidden": "true" }, "See its pros and cons →"),
      );
      list.append(el("li", {}, card));
    }
  }

  async function loadEntities() {
    const select = $("entity");
    let entities;
    try {
      entities = await getJSON("entities");
    } catch (error) {
      notice(error.message);
      select.replaceChildren(el("option", { value: "" }, "Could not load entities"));
      $("welcome-status").textContent = `Could not load the indexed entities: ${error.message}`;
      return;
    }
    select.replaceChildren(el("option", { value: "" }, entities.length ? "Choose an entity…" : "No entity is indexed"));
    for (const item of entities) {
      const label = `${item.name || `entity ${item.entity_id}`} (${plural(item.reviews, "review")})`;
      select.append(el("option", { value: item.entity_id }, label));
    }
    select.disabled = entities.length === 0;
    renderEntityCards(entities);
    const wanted = params.get("entity");
    const initial = entities.find((e) => e.entity_id === wanted) || (entities.length === 1 ? entities[0] : null);
    if (initial) {
      select.value = initial.entity_id;
      selectEntity(initial.entity_id);
    }
  }

  async function selectEntity(entityId) {
    for (const controller of state.streams) controller.abort();
    state.streams.clear();
    state.generation += 1;
    const generation = state.generation;
    Object.assign(state, { entity: entityId || null, detail: null, aspects: [], selected: null, chat: [] });
    state.results = new Map();
    notice("");
    clear($("chips"));
    clear($("chat-log"));
    clear($("alert-list"));
    $("alerts").hidden = true;
    $("aspects-source").textContent = "";
    $("welcome").hidden = Boolean(entityId);
    $("workspace").hidden = !entityId;
    renderDetail();
    const url = new URL(window.location.href);
    if (!entityId) {
      $("entity-title").textContent = "";
      $("entity-meta").textContent = "";
      url.searchParams.delete("entity");
      url.searchParams.delete("aspect");
      window.history.replaceState(null, "", url.pathname + url.search + url.hash);
      return;
    }
    if (url.searchParams.get("entity") !== entityId) url.searchParams.delete("aspect");
    url.searchParams.set("entity", entityId);
    window.history.replaceState(null, "", url.pathname + url.search + url.hash);
    try {
      const detail = await getJSON(entityPath());
      if (generation !== state.generation) return;
      state.detail = detail;
      $("entity-title").textContent = detail.name || `Entity ${detail.entity_id}`;
      $("entity-meta").textContent = `${fmt(detail.reviews)} reviews · ${fmt(detail.sentences)} sentences`;
    } catch (error) {
      notice(error.message);
      return;
    }
    await loadAspects(generation);
  }

  // --------------------------------------------------------------------------- aspects and highlights
  async function loadAspects(generation) {
    $("aspects-source").textContent = "Loading aspects…";
    let body;
    try {
      body = await getJSON(entityPath(`/aspects?top_k=${MAX_CHIPS}`));
    } catch (error) {
      if (generation !== state.generation) return;
      $("aspects-source").textContent =
        error.status === 409 ? "No aspects yet: type your own aspects below." : "";
      if (error.status !== 409) notice(error.message);
      return;
    }
    if (generation !== state.generation) return;
    state.aspects = body.aspects.map((a) => ({ ...a, custom: false }));
    state.aspects.sort((a, b) => b.mentions - a.mentions);
    $("aspects-source").textContent =
      body.source === "hiro"
        ? "Discovered in the reviews, most discussed first. Pick one to see its pros and cons."
        : "The aspects of the expert review, most discussed first. Pick one to see its pros and cons.";
    renderChips();
    // Highlights are written on demand (one aspect per click: with an LLM each one is a model call).
    // The aspect named in the URL (?aspect=), else the most discussed one, is opened now, so the page
    // shows PROS/CONS without a click; its stream also brings the entity-wide alerts.
    const wanted = new URL(window.location.href).searchParams.get("aspect");
    const first = state.aspects.find((a) => a.aspect === wanted) || state.aspects[0];
    if (first) selectAspect(first.aspect);
    else streamHighlights([], generation);
  }

  function chipLabel(a) {
    return `${a.aspect}: mentioned in ${fmt(a.mentions)} reviews, ${fmt(a.positive)} positive, ${fmt(a.negative)} negative`;
  }

  function renderChips() {
    const box = $("chips");
    clear(box);
    for (const aspect of state.aspects) {
      const total = Math.max(aspect.mentions, aspect.positive + aspect.negative + (aspect.neutral || 0), 1);
      const pos = el("span", { class: "pos" });
      const neg = el("span", { class: "neg" });
      pos.style.width = `${(100 * aspect.positive) / total}%`;
      neg.style.width = `${(100 * aspect.negative) / total}%`;
      const chip = el(
        "button",
        {
          type: "button",
          class: aspect.custom ? "chip custom" : "chip",
          "aria-pressed": state.selected === aspect.aspect ? "true" : "false",
          "aria-label": chipLabel(aspect),
          title: chipLabel(aspect),
          onclick: () => selectAspect(aspect.aspect),
        },
        el("span", { class: "chip-name" }, aspect.aspect),
        el("span", { class: "chip-count" }, fmt(aspect.mentions)),
        el("span", { class: "bar", "aria-hidden": "true" }, pos, neg),
      );
      chip.dataset.aspect = aspect.aspect;
      box.append(chip);
    }
  }

  /** Refresh one chip's count, bar and label in place (rebuilding the chips would lose the focus). */
  function updateChip(aspect) {
    for (const chip of $("chips").querySelectorAll(".chip")) {
      if (chip.dataset.aspect !== aspect.aspect) continue;
      const total = Math.max(aspect.mentions, aspect.positive + aspect.negative + (aspect.neutral || 0), 1);
      chip.querySelector(".chip-count").textContent = fmt(aspect.mentions);
      chip.querySelector(".bar .pos").style.width = `${(100 * aspect.positive) / total}%`;
      chip.querySelector(".bar .neg").style.width = `${(100 * aspect.negative) / total}%`;
      chip.setAttribute("aria-label", chipLabel(aspect));
      chip.setAttribute("title", chipLabel(aspect));
    }
  }

  function queryString(queries) {
    const q = new URLSearchParams();
    for (const query of queries) q.append("query", query);
    return q.toString();
  }

  /** A highlights stream: each query's PROS/CONS arrive as they complete, the alerts at the end.
   *  With no query it asks for the entity's expert-review aspects (for the alerts) when it has some. */
  async function streamHighlights(queries, generation) {
    for (const query of queries) state.results.set(query, { loading: true });
    let path = `/highlights/stream?${queryString(queries)}`;
    if (!queries.length) {
      if (!state.detail || !(state.detail.queries || []).length) return;
      path = "/highlights/stream?expert=true";
    }
    const controller = new AbortController();
    state.streams.add(controller);
    try {
      const response = await request(entityPath(path), {
        accept: "text/event-stream",
        signal: controller.signal,
      });
      for await (const item of sseEvents(response)) {
        if (generation !== state.generation) return;
        if (item.event === "highlight") {
          storeResult(item.data.query, item.data.highlights || [], item.data.failure);
        } else if (item.event === "done") {
          renderAlerts(item.data.alerts || []);
          for (const failure of item.data.failures || []) storeResult(failure.query, [], failure);
        } else if (item.event === "error") {
          throw new ApiError(0, item.data);
        }
      }
    } catch (error) {
      if (error.name === "AbortError" || generation !== state.generation) return;
      notice(`Highlights: ${error.message}`);
      for (const query of queries) {
        const result = state.results.get(query);
        if (result && result.loading) state.results.set(query, { highlights: [], failure: { error: error.message } });
      }
      renderDetail();
    } finally {
      state.streams.delete(controller);
    }
    // A query that never got an event (nothing to say about it) is settled as empty.
    for (const query of queries) {
      const result = state.results.get(query);
      if (result && result.loading) storeResult(query, [], null);
    }
  }

  function storeResult(query, highlights, failure) {
    const support = highlights.length ? highlights[0].support : null;
    const previous = state.results.get(query) || {};
    state.results.set(query, { ...previous, loading: false, highlights, failure, support: support || previous.support });
    if (state.selected === query) renderDetail();
    if (!highlights.length && !failure && state.selected === query) loadRelated(query, state.generation);
  }

  function selectAspect(name) {
    state.selected = name;
    const url = new URL(window.location.href); // a shareable address: ?entity=101&aspect=wi-fi
    url.searchParams.set("aspect", name);
    window.history.replaceState(null, "", url.pathname + url.search + url.hash);
    for (const chip of $("chips").querySelectorAll(".chip")) {
      chip.setAttribute("aria-pressed", chip.dataset.aspect === name ? "true" : "false");
    }
    const result = state.results.get(name);
    if (!result) {
      streamHighlights([name], state.generation);
      renderDetail();
      return;
    }
    renderDetail();
    if (!result.loading && !result.highlights.length && !result.hits && !result.failure) {
      loadRelated(name, state.generation);
    }
  }

  /** No highlight for a query: show how many reviews mention it and the closest sentences (search). */
  async function loadRelated(query, generation) {
    const result = state.results.get(query);
    if (!result || result.hits || result.relatedLoading) return;
    result.relatedLoading = true;
    try {
      const body = await getJSON(entityPath(`/search?q=${encodeURIComponent(query)}&k=5`));
      if (generation !== state.generation) return;
      Object.assign(result, { hits: body.hits || [], support: result.support || body.support });
      const chip = state.aspects.find((a) => a.aspect === query);
      if (chip && chip.custom && !chip.mentions && body.support) {
        Object.assign(chip, { mentions: body.support.reviews, positive: body.support.positive, negative: body.support.negative, neutral: body.support.neutral });
        updateChip(chip);
      }
    } catch (error) {
      if (generation !== state.generation) return;
      Object.assign(result, { hits: [] });
      notice(`Search: ${error.message}`);
    }
    result.relatedLoading = false;
    if (state.selected === query) renderDetail();
  }

  function quoteButton(evidence) {
    const reviewId = reviewIdOf(evidence.sentence_id);
    return el(
      "button",
      {
        type: "button",
        class: "quote",
        title: "Open the full review",
        "data-sentence-id": evidence.sentence_id,
        onclick: (event) => openReview(evidence.sentence_id, event.currentTarget),
      },
      `“${evidence.text}”`,
      el("span", { class: "quote-src" }, reviewId === null ? "open the review" : `review ${reviewId} · open the full review`),
    );
  }

  function renderHighlight(h) {
    const meta = el("p", { class: "highlight-meta" }, el("span", { class: "hl-support" }, describeSupport(h.support)));
    const v = h.verification;
    if (v && v.verdict) {
      const score = (x) => (x === null || x === undefined ? "n/a" : Number(x).toFixed(2));
      const scores = `AR ${score(v.aspect_relevance)}, SF ${score(v.sentiment_factuality)}, OF ${score(v.opinion_faithfulness)}`;
      const action = v.action && v.action !== "kept" ? `, ${v.action}` : "";
      const title = `Checked against its own quotes: ${v.verdict}${action} (${scores})${v.reason ? `: ${v.reason}` : ""}`;
      meta.append(el("span", { class: `badge ${v.verdict}`, title, "aria-label": title }, v.verdict));
      if (v.action === "rewritten") meta.append(el("span", { class: "verdict-reason" }, "rewritten from its quotes"));
      if (v.reason && v.verdict !== "supported") meta.append(el("span", { class: "verdict-reason" }, v.reason));
    }
    if (h.polarity_agrees === false) meta.append(el("span", {}, "the quoted sentences lean the other way"));
    const item = el("li", { class: "highlight" }, el("p", { class: "highlight-text" }, h.text), meta);
    const t = h.trend;
    if (t && t.label) {
      item.append(
        el(
          "p",
          { class: `trend ${t.label}` },
          el("span", { class: "trend-label" }, `Trend: ${t.label}`),
          t.summary ? ` · ${t.summary}` : "",
        ),
      );
    }
    if (h.evidence && h.evidence.length) {
      item.append(el("ul", { class: "quotes", "aria-label": "Quotes from the reviews" }, h.evidence.map((e) => el("li", {}, quoteButton(e)))));
    }
    return item;
  }

  function renderDetail() {
    const title = $("detail-title");
    const pros = $("pros");
    const cons = $("cons");
    clear(pros);
    clear(cons);
    clear($("related-list"));
    $("related").hidden = true;
    $("detail-support").textContent = "";
    $("detail-status").textContent = "";
    const name = state.selected;
    $("detail-sides").hidden = !name;
    if (!name) {
      title.textContent = state.entity ? "Pick an aspect" : "Choose an entity";
      $("detail-status").textContent = state.entity
        ? "Click an aspect above, or type your own, to see its pros and cons with the quotes behind them."
        : "";
      return;
    }
    title.textContent = name;
    const result = state.results.get(name);
    if (!result || result.loading) {
      $("detail-status").textContent = "Writing the highlights…";
      return;
    }
    if (result.support) $("detail-support").textContent = describeSupport(result.support);
    if (result.failure) {
      $("detail-status").textContent = `Could not write highlights for this aspect: ${result.failure.error || "unknown error"}`;
    }
    const sides = { pros: [], cons: [] };
    for (const h of result.highlights || []) (h.polarity === "cons" ? sides.cons : sides.pros).push(h);
    for (const [side, list] of [["pros", pros], ["cons", cons]]) {
      if (sides[side].length) for (const h of sides[side]) list.append(renderHighlight(h));
      else list.append(el("li", { class: "empty" }, side === "pros" ? "No pros for this aspect." : "No cons for this aspect."));
    }
    if (!(result.highlights || []).length && !result.failure) {
      if (result.hits === undefined) $("detail-status").textContent = "Looking for review sentences…";
      else if (!result.hits.length) $("detail-status").textContent = "No review talks about this.";
      else {
        $("related").hidden = false;
        for (const hit of result.hits) $("related-list").append(el("li", {}, quoteButton(hit)));
      }
    }
  }

  function renderAlerts(alerts) {
    const list = $("alert-list");
    clear(list);
    $("alerts").hidden = !alerts.length;
    for (const alert of alerts) {
      const quotes = (alert.evidence || []).slice(0, 5).map((e) => el("li", {}, quoteButton(e)));
      const reviews = alert.support === 1 ? "1 review says" : `${fmt(alert.support)} reviews say`;
      list.append(
        el(
          "li",
          {},
          el("p", { class: "alert-head" }, el("span", { class: "alert-category" }, alert.category), alert.description),
          quotes.length
            ? el("details", { class: "alert-quotes" }, el("summary", {}, `What the ${reviews}`), el("ul", { class: "quotes" }, quotes))
            : null,
        ),
      );
    }
  }

  /** The query box: the user's own aspects become chips (dashed) with their highlights. */
  async function askAspects(text) {
    if (!state.entity) {
      notice("Choose an entity first.");
      return;
    }
    const queries = [...new Set(text.split(",").map((q) => q.trim()).filter(Boolean))].slice(0, 10);
    if (!queries.length) {
      notice("Type an aspect, e.g. parking.");
      return;
    }
    notice("");
    const generation = state.generation;
    const button = $("query-send");
    button.disabled = true;
    for (const q of queries) state.results.set(q, { loading: true });
    for (const q of queries) {
      if (!state.aspects.some((a) => a.aspect === q)) {
        state.aspects.push({ aspect: q, mentions: 0, positive: 0, negative: 0, neutral: 0, custom: true });
      }
    }
    state.selected = queries[0];
    renderChips();
    renderDetail();
    try {
      const set = await getJSON(entityPath(`/highlights?${queryString(queries)}`));
      if (generation !== state.generation) return;
      const byQuery = new Map(queries.map((q) => [q, []]));
      for (const h of [...(set.pros || []), ...(set.cons || [])]) {
        if (!byQuery.has(h.query)) byQuery.set(h.query, []);
        byQuery.get(h.query).push(h);
      }
      const failures = new Map((set.failures || []).map((f) => [f.query, f]));
      for (const [q, list] of byQuery) {
        state.results.set(q, { loading: false, highlights: list, failure: failures.get(q) || null, support: list.length ? list[0].support : null });
        const chip = state.aspects.find((a) => a.aspect === q);
        if (chip && chip.custom && list.length) Object.assign(chip, { mentions: list[0].support.reviews, positive: list[0].support.positive, negative: list[0].support.negative, neutral: list[0].support.neutral });
      }
      if (set.alerts && set.alerts.length && $("alerts").hidden) renderAlerts(set.alerts);
      renderChips();
      selectAspect(queries[0]);
    } catch (error) {
      if (generation !== state.generation) return;
      notice(error.message);
      for (const q of queries) state.results.set(q, { loading: false, highlights: [], failure: { error: error.message } });
      renderDetail();
    } finally {
      button.disabled = false;
    }
  }

  // --------------------------------------------------------------------------- the review dialog
  async function openReview(sentenceId, trigger) {
    const reviewId = reviewIdOf(sentenceId);
    if (!state.entity || reviewId === null) return;
    const dialog = $("review");
    let review;
    try {
      review = await getJSON(entityPath(`/reviews/${encodeURIComponent(reviewId)}`));
    } catch (error) {
      notice(error.message);
      return;
    }
    $("review-title").textContent = `Review ${review.review_id}`;
    const meta = [];
    if (review.rating !== null && review.rating !== undefined) meta.push(`rating ${review.rating}`);
    if (review.publication_date) meta.push(String(review.publication_date));
    if (review.helpful_votes) meta.push(plural(review.helpful_votes, "helpful vote"));
    $("review-meta").textContent = meta.join(" · ");
    const box = $("review-text");
    clear(box);
    // Offsets count Unicode code points (Python); JS strings count UTF-16 units, so slice code points.
    const chars = Array.from(review.text);
    const sentence = (review.sentences || []).find((s) => s.sentence_id === sentenceId);
    let mark = null;
    if (sentence && sentence.start >= 0 && sentence.end <= chars.length && sentence.start < sentence.end) {
      mark = el("mark", { id: "review-mark" }, chars.slice(sentence.start, sentence.end).join(""));
      box.append(chars.slice(0, sentence.start).join(""), mark, chars.slice(sentence.end).join(""));
    } else {
      box.append(review.text);
    }
    dialog.returnFocusTo = trigger || null;
    if (!dialog.open) dialog.showModal();
    if (mark) mark.scrollIntoView({ block: "center" });
  }

  function closeReview() {
    const dialog = $("review");
    if (dialog.open) dialog.close();
  }

  // --------------------------------------------------------------------------- chat
  function answerNodes(text, citations, onCite) {
    // "[S1]" markers become buttons that open the cited review; everything else stays text.
    const byMarker = new Map(citations.map((c) => [c.marker, c]));
    const nodes = [];
    let last = 0;
    for (const match of text.matchAll(/\[(S\d+)\]/g)) {
      const citation = byMarker.get(match[1]);
      if (!citation) continue;
      if (match.index > last) nodes.push(document.createTextNode(text.slice(last, match.index)));
      nodes.push(
        el(
          "button",
          {
            type: "button",
            class: "cite",
            title: `Open the review: “${citation.text}”`,
            "aria-label": `Source ${match[1]}: open the review`,
            "data-sentence-id": citation.sentence_id,
            onclick: (event) => onCite(citation, event.currentTarget),
          },
          match[1],
        ),
      );
      last = match.index + match[0].length;
    }
    if (last < text.length) nodes.push(document.createTextNode(text.slice(last)));
    return nodes;
  }

  function chatBubble(role, text) {
    const body = el("p", { class: "msg-text" }, text || "");
    const item = el("li", { class: `msg ${role}` }, body);
    item.setAttribute("aria-label", role === "user" ? "You asked" : role === "error" ? "Error" : "Answer");
    $("chat-log").append(item);
    item.scrollIntoView({ block: "nearest" });
    return { item, body };
  }

  function finishAnswer(bubble, answer) {
    const open = (c, trigger) => openReview(c.sentence_id, trigger);
    const cited = answer.citations && answer.citations.length ? answer.citations : answer.evidence || [];
    bubble.body.replaceChildren(...answerNodes(answer.answer, cited, open));
    if (answer.support && answer.support.summary) {
      bubble.item.append(el("p", { class: "hint" }, `Support: ${answer.support.summary}`));
    }
    if (answer.citations && answer.citations.length) {
      const list = el("ol", { class: "quotes" }, answer.citations.map((c) => el("li", {}, el("span", { class: "hint" }, `${c.marker} `), quoteButton(c))));
      bubble.item.append(el("details", { class: "sources" }, el("summary", {}, `Sources (${answer.citations.length})`), list));
    }
  }

  async function ask(question) {
    if (state.chatBusy) return;
    if (!state.entity) {
      notice("Choose an entity first.");
      return;
    }
    const generation = state.generation;
    state.chatBusy = true;
    $("chat-send").disabled = true;
    chatBubble("user", question);
    state.chat.push({ role: "user", content: question.slice(0, MAX_MESSAGE) });
    const bubble = chatBubble("assistant", "");
    bubble.item.classList.add("streaming");
    bubble.item.setAttribute("aria-busy", "true"); // screen readers read the answer once, when it is complete
    let text = "";
    let answered = false;
    try {
      const response = await request(entityPath("/chat"), {
        method: "POST",
        accept: "text/event-stream",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ messages: state.chat.slice(-MAX_HISTORY), extractive: !state.llm }),
      });
      for await (const item of sseEvents(response)) {
        if (generation !== state.generation) return;
        if (item.event === "token") {
          text += item.data.text || "";
          bubble.body.textContent = text;
        } else if (item.event === "done") {
          answered = true;
          finishAnswer(bubble, item.data);
          state.chat.push({ role: "assistant", content: String(item.data.answer || text).slice(0, MAX_MESSAGE) });
        } else if (item.event === "error") {
          throw new ApiError(0, item.data);
        }
      }
      if (!answered) throw new Error("the answer stream ended early");
    } catch (error) {
      if (generation !== state.generation) return;
      bubble.item.classList.add("error");
      bubble.body.textContent = `${text ? `${text}\n` : ""}Could not answer: ${error.message}`;
      state.chat.pop(); // the unanswered question is not part of the conversation
    } finally {
      bubble.item.classList.remove("streaming");
      bubble.item.removeAttribute("aria-busy");
      state.chatBusy = false;
      $("chat-send").disabled = false;
      bubble.item.scrollIntoView({ block: "nearest" });
    }
  }

  // --------------------------------------------------------------------------- wiring
  function wire() {
    $("entity").addEventListener("change", (event) => selectEntity(event.target.value));
    $("entity-form").addEventListener("submit", (event) => event.preventDefault());
    $("query-form").addEventListener("submit", (event) => {
      event.preventDefault();
      askAspects($("query").value);
    });
    $("chat-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const input = $("chat-input");
      const question = input.value.trim();
      if (!question) return;
      input.value = "";
      ask(question);
    });
    $("chat-input").addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        $("chat-form").requestSubmit();
      }
    });
    $("chat-reset").addEventListener("click", () => {
      state.chat = [];
      clear($("chat-log"));
      $("chat-input").focus();
    });
    const dialog = $("review");
    $("review-close").addEventListener("click", closeReview);
    dialog.addEventListener("click", (event) => {
      if (event.target !== dialog) return;
      const box = dialog.getBoundingClientRect(); // the dialog's own padding is not the backdrop
      const inside = event.clientX >= box.left && event.clientX <= box.right && event.clientY >= box.top && event.clientY <= box.bottom;
      if (!inside) closeReview();
    });
    dialog.addEventListener("close", () => {
      const back = dialog.returnFocusTo;
      dialog.returnFocusTo = null;
      if (back && document.contains(back)) back.focus();
    });
  }

  async function start() {
    wire();
    await loadService();
    await loadEntities();
  }

  // Exposed for the browser tests and for debugging in the console (no behaviour depends on it).
  window.opinio = { state, describeSupport, reviewIdOf, renderHighlight };

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
