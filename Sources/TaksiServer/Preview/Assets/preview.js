// The live preview of taksi-server (served at /preview, embedded in the binary).
//
// It loads a screen the way an app does, in two phases, through /preview/exchange.json, which
// hands the request with exactly an app's headers to the server's own screen endpoints and
// describes the answer. It draws the built-in components close to the Taksi client's own views,
// custom components from their declared fields, and redraws on every reload the server announces
// on /preview/events.stream.
//
// Safety: every value from screens, upstreams or the URL reaches the page as text (textContent,
// never markup); links are built here, to /preview only; images load from http(s) URLs only.
'use strict';

/** The page's own settings in its URL; every other query parameter goes to the screen. */
const CONTROLS = ['version', 'alternative', 'user', 'platform', 'language', 'gzip'];
/** Built-in component types whose fields take data (the client asks for data when one is present). */
const DYNAMIC_BUILT_INS = new Set(['label_component', 'collection_component']);

const state = {
  catalog: null,
  setVersion: null,
  /** Bumped by every draw: an answer that arrives for an older draw is dropped. */
  generation: 0,
};

// MARK: Small helpers

/** An element with attributes and children; strings become text nodes, never markup. */
function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') node.className = value;
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
}

async function getJSON(url) {
  const response = await fetch(url, { cache: 'no-store', headers: { Accept: 'application/json' } });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return response.json();
}

/** The screen path of a preview URL path (`/preview/bikes/stations/velib` is `bikes/stations/velib`). */
function screenPathOf(pathname) {
  const path = pathname.replace(/^\/preview\/?/, '').replace(/\/+$/, '');
  return path;
}

function decodeSegment(segment) {
  try { return decodeURIComponent(segment); } catch { return segment; }
}

/** The catalog's screen for a path, with its path parameters' values (decoded); literal names first. */
function findScreen(path) {
  const segments = path.split('/').map(decodeSegment);
  const screens = state.catalog.screens;
  const literal = screens.find((screen) => screen.name === segments.join('/') && screen.parameter_order.length === 0);
  if (literal) return { screen: literal, params: {} };
  for (const screen of screens) {
    const pattern = screen.name.split('/');
    if (pattern.length !== segments.length || screen.parameter_order.length === 0) continue;
    const params = {};
    const matches = pattern.every((part, index) => {
      const parameter = /^\{(.+)\}$/.exec(part);
      if (!parameter) return part === segments[index];
      params[parameter[1]] = segments[index];
      return segments[index] !== '';
    });
    if (matches) return { screen, params };
  }
  return null;
}

/** `/preview/<path>` with the controls and query values; empty values are left out. */
function previewURL(path, values) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined && value !== null && value !== '') query.set(name, value);
  }
  const text = query.toString();
  return '/preview/' + path + (text ? '?' + text : '');
}

/** A screen path with its parameters filled in, each segment percent-encoded. */
function fillPath(name, params) {
  return name.split('/').map((part) => {
    const parameter = /^\{(.+)\}$/.exec(part);
    if (!parameter) return part;
    const value = params[parameter[1]];
    return value ? encodeURIComponent(value) : part;
  }).join('/');
}

/** The page's URL settings: controls, and the values meant for the screen's query. */
function readLocation() {
  const search = new URLSearchParams(location.search);
  const controls = {};
  const query = {};
  for (const [name, value] of search) {
    if (CONTROLS.includes(name)) controls[name] = value;
    else query[name] = value;
  }
  return { path: screenPathOf(location.pathname), controls, query };
}

// MARK: Live updates

function listen() {
  const live = document.getElementById('live');
  if (!window.EventSource) {
    live.textContent = 'no live updates in this browser';
    return;
  }
  const source = new EventSource('/preview/events.stream');
  source.addEventListener('open', () => {
    live.dataset.state = 'live';
    live.textContent = 'live';
  });
  source.addEventListener('error', () => {
    live.dataset.state = 'reconnecting';
    live.textContent = 'reconnecting';
  });
  source.addEventListener('screens', (event) => {
    let status;
    try { status = JSON.parse(event.data); } catch { return; }
    showPending(status.pending_errors);
    if (status.screens_version !== state.setVersion) draw();
  });
}

function showPending(errors) {
  const section = document.getElementById('pending');
  const list = document.getElementById('pending-list');
  clear(list);
  section.hidden = !errors || errors.length === 0;
  for (const error of errors || []) {
    const where = error.file + (error.line ? `:${error.line}:${error.column}` : '');
    list.append(el('li', {}, el('code', { class: 'where' }, where), ' ', error.path ? el('code', {}, error.path) : '', ' ', error.message));
  }
}

// MARK: Drawing

async function draw() {
  const generation = ++state.generation;
  let catalog;
  try {
    catalog = await getJSON('/preview/catalog.json');
  } catch (error) {
    return showFailure(`The server did not answer: ${error.message}`);
  }
  if (generation !== state.generation) return;
  state.catalog = catalog;
  state.setVersion = catalog.screens_version;
  document.getElementById('set-version').textContent = `screens ${catalog.screens_version}`;
  showPending(catalog.pending_errors);
  const { path } = readLocation();
  if (path === '') drawList();
  else await drawScreen(generation);
}

function showFailure(message) {
  const main = document.getElementById('main');
  clear(main);
  main.dataset.phase = 'error';
  main.append(el('p', { class: 'notice error' }, message));
}

function drawList() {
  const main = document.getElementById('main');
  clear(main);
  main.dataset.phase = 'list';
  const rows = state.catalog.screens.map((screen) => {
    const variants = screen.variants.map((variant) => {
      const controls = { version: variant.sample_version, alternative: variant.alternative === 'default' ? '' : variant.alternative };
      const label = `${variant.version || 'any version'} · ${variant.alternative}`;
      return el('li', {}, el('a', { href: previewURL(screen.name, controls) }, label), ' ', el('span', { class: 'muted' }, variant.file),
        el('div', { class: 'muted uses' }, `uses ${variant.uses.join(', ')}`));
    });
    const experiments = screen.experiments.map((experiment) => el('li', {},
      `${experiment.name}: `, Object.entries(experiment.weights).map(([alternative, weight]) => `${alternative} ${weight}`).join(', '),
      ' ', el('span', { class: 'muted experiment-status' }, describeExperiment(experiment))));
    const parameters = screen.parameter_order.map((name) => el('code', {}, `{${name}}: ${describeParameter(screen.parameters[name])}`));
    return el('tr', {},
      el('td', {}, el('a', { href: previewURL(screen.name, {}) }, screen.name)),
      el('td', {}, el('ul', {}, variants)),
      el('td', {}, experiments.length ? el('ul', {}, experiments) : el('span', { class: 'muted' }, 'none')),
      el('td', {}, parameters.length ? parameters : el('span', { class: 'muted' }, 'none')));
  });
  main.append(
    el('h1', {}, 'Screens'),
    el('p', { class: 'muted' }, 'Each link opens the screen as an app with that version and alternative receives it.'),
    el('table', { class: 'screens' },
      el('thead', {}, el('tr', {}, el('th', {}, 'screen'), el('th', {}, 'variants'), el('th', {}, 'experiments'), el('th', {}, 'path parameters'))),
      el('tbody', {}, rows)));
}

function describeParameter(parameter) {
  if (!parameter) return '';
  if (parameter.one_of) return 'one of ' + parameter.one_of.join(', ');
  return parameter.type + (parameter.pattern ? ` matching ${parameter.pattern}` : '');
}

async function drawScreen(generation) {
  const { path, controls, query } = readLocation();
  const main = document.getElementById('main');
  const found = findScreen(path);
  const phone = el('div', { class: 'screen', id: 'phone-screen' });
  const details = el('section', { class: 'details' });
  const view = {
    path, controls, query, found, details,
    variant: el('dd', { id: 'variant' }, '…'),
    cacheTags: el('dd', { id: 'cache-tags' }, '…'),
    warnings: el('ul', { class: 'warnings', id: 'warnings' }),
    phone, components: [], filled: {}, actions: [], generation,
  };
  clear(main);
  main.dataset.phase = 'loading';
  main.append(
    el('div', { class: 'layout' },
      el('aside', { class: 'controls' }, drawControls(view)),
      el('div', { class: 'phone' }, el('div', { class: 'notch' }), phone),
      details));
  document.title = `${found ? found.screen.name : path} · taksi-server preview`;
  details.append(
    el('h2', {}, found ? found.screen.name : path),
    el('dl', { class: 'facts' }, el('dt', {}, 'variant'), view.variant, el('dt', {}, 'CDN tags'), view.cacheTags));
  if (!found) {
    main.dataset.phase = 'error';
    phone.append(el('p', { class: 'notice error' }, `There is no screen at "${path}". `, el('a', { href: '/preview' }, 'See the list of screens.')));
    return;
  }
  const unfilled = found.screen.parameter_order.filter((name) => !found.params[name] || /^\{.*\}$/.test(found.params[name]));
  if (unfilled.length > 0) {
    main.dataset.phase = 'parameters';
    phone.append(el('p', { class: 'notice' }, `Fill in ${unfilled.map((name) => `{${name}}`).join(', ')} to load this screen.`));
    return;
  }

  const skeleton = await exchange(view, 'skeleton');
  if (generation !== state.generation) return;
  showExchange(view, 'Skeleton', skeleton);
  const variantID = header(skeleton, 'X-Taksi-Variant');
  const variantInfo = found.screen.variants.find((variant) => variant.id === variantID);
  view.revision = header(skeleton, 'X-Taksi-Skeleton');
  view.variant.textContent = variantID
    ? `${variantID}${variantInfo ? ` (${variantInfo.file})` : ''}${view.revision ? `, revision ${view.revision}` : ''}`
    : 'none';
  // What a change to this variant purges from a CDN (docs/operations.md, "A CDN in front").
  view.cacheTags.textContent = variantInfo ? variantInfo.cache_tags.join(' ') : '';
  view.actions = variantInfo ? variantInfo.actions : [];
  const components = payload(skeleton, 'components');
  view.components = components || [];
  if (!components) {
    main.dataset.phase = 'error';
    phone.append(errorNotice(skeleton));
    return;
  }
  clear(phone);
  phone.append(...drawComponents(components, {}, view));
  main.dataset.phase = 'skeleton';

  if (!components.some(needsData)) {
    view.warnings.append(el('li', { class: 'ok' }, 'No dynamic components: the app asks for no data.'));
    main.dataset.phase = 'data';
    return;
  }
  const data = await exchange(view, 'data');
  if (generation !== state.generation) return;
  showExchange(view, 'Data', data);
  const entries = payload(data, 'interface_data');
  if (!entries) {
    main.dataset.phase = 'error';
    phone.prepend(errorNotice(data));
    return;
  }
  const filled = view.filled;
  for (const entry of entries) filled[entry.identifier] = entry.content;
  view.pages = pagesOf(data);
  clear(phone);
  phone.append(...drawComponents(components, filled, view));
  for (const component of components) {
    if (component.requires_data && !(component.identifier in filled)) {
      view.warnings.append(el('li', {}, `${component.identifier} (${component.name}) got no data: the app keeps its placeholder.`));
    }
  }
  if (header(data, 'X-Taksi-Degraded')) {
    view.warnings.append(el('li', {}, `Degraded: ${header(data, 'X-Taksi-Degraded')} (an upstream failed; its components are left out).`));
  }
  if (view.warnings.childElementCount === 0) view.warnings.append(el('li', { class: 'ok' }, 'Every dynamic component was filled.'));
  main.dataset.phase = 'data';
}

/** The `pages` of a data answer: for each list that continues, its next page's token and field. */
function pagesOf(answer) {
  try {
    const pages = JSON.parse(answer.body).pages;
    return pages && typeof pages === 'object' ? pages : {};
  } catch {
    return {};
  }
}

/**
 * Loads the next page of a list, as the app library does: with the list's token (and the skeleton's
 * revision), the page's items added to those shown; a page that fails leaves the list as it was.
 */
async function loadMore(view, identifier) {
  const page = view.pages && view.pages[identifier];
  if (!page) return;
  const main = document.getElementById('main');
  main.dataset.phase = 'more';
  const query = { ...view.query, only: identifier, page: page.token };
  const answer = await exchange({ ...view, query }, 'data');
  if (view.generation !== state.generation) return;
  showExchange(view, `Data, more of ${identifier}`, answer);
  const entries = payload(answer, 'interface_data');
  const entry = entries && entries.find((found) => found.identifier === identifier);
  const items = entry && entry.content && entry.content[page.field];
  if (!Array.isArray(items)) {
    const degraded = header(answer, 'X-Taksi-Degraded');
    toast(`The next page of ${identifier} did not come (${answer.status}${degraded ? `, ${degraded} failed` : ''}): the list is as it was.`);
    main.dataset.phase = 'data';
    return;
  }
  const shown = (view.filled[identifier] || {})[page.field];
  view.filled[identifier] = { ...entry.content, [page.field]: (Array.isArray(shown) ? shown : []).concat(items) };
  const next = pagesOf(answer)[identifier];
  if (next) view.pages[identifier] = next;
  else delete view.pages[identifier];
  clear(view.phone);
  view.phone.append(...drawComponents(view.components, view.filled, view));
  main.dataset.phase = 'data';
}

/** The array under `key` of a 200 answer's JSON body; null for an error or another shape. */
function payload(answer, key) {
  if (answer.status !== 200) return null;
  try {
    const value = JSON.parse(answer.body)[key];
    return Array.isArray(value) ? value : null;
  } catch {
    return null;
  }
}

function needsData(component) {
  if (component.requires_data || DYNAMIC_BUILT_INS.has(component.name)) return true;
  const schema = state.catalog.components[component.name];
  return Boolean(schema && !schema.built_in && schema.fields.some((field) => field.dynamic));
}

function errorNotice(answer) {
  let message = answer.body;
  try {
    const body = JSON.parse(answer.body);
    if (body.error) message = `${body.error.code}: ${body.error.message}`;
  } catch { /* shown as it came */ }
  return el('p', { class: 'notice error' }, `${answer.status}: ${message}`);
}

function header(answer, name) {
  const found = (answer.headers || []).find(([key]) => key.toLowerCase() === name.toLowerCase());
  return found ? found[1] : null;
}

/** An experiment's state in words: decided or running, and who is in. */
function describeExperiment(experiment) {
  if (experiment.status === 'winner') return `· winner ${experiment.winner}: everyone sees it, no exposures`;
  if (experiment.status === 'stopped') return '· stopped: everyone sees default, no exposures';
  const parts = ['· running'];
  if (experiment.holdout > 0) parts.push(`holdout ${experiment.holdout}%`);
  if (experiment.rollout < 100 - experiment.holdout) parts.push(`rollout ${experiment.rollout}%`);
  const audience = experiment.audience || {};
  if (audience.versions) parts.push(`versions ${audience.versions}`);
  if (audience.platforms) parts.push(`platforms ${audience.platforms.join(', ')}`);
  if (audience.locales) parts.push(`locales ${audience.locales.join(', ')}`);
  if (experiment.layer) parts.push(`layer ${experiment.layer.name} ${experiment.layer.from}–${experiment.layer.to}%`);
  return parts.join(', ');
}

async function exchange(view, phase) {
  const parameters = new URLSearchParams({ screen: view.path, phase });
  parameters.set('query', new URLSearchParams(view.query).toString());
  for (const name of ['version', 'alternative', 'user', 'platform', 'language']) {
    if (view.controls[name]) parameters.set(name, view.controls[name]);
  }
  // The data is asked for the skeleton drawn, as an app asks (X-Taksi-Skeleton).
  if (phase === 'data' && view.revision) parameters.set('skeleton', view.revision);
  parameters.set('gzip', view.controls.gzip === '0' ? '0' : '1');
  try {
    const response = await fetch('/preview/exchange.json?' + parameters.toString(), { cache: 'no-store' });
    if (response.ok) return await response.json();
    return { status: response.status, headers: [], body: await response.text(), bytes: 0, request: null };
  } catch (error) {
    return { status: 0, headers: [], body: `the server did not answer: ${error.message}`, bytes: 0, request: null };
  }
}

const SHOWN_HEADERS = ['X-Taksi-Variant', 'X-Taksi-Skeleton', 'X-Taksi-Degraded', 'ETag', 'Cache-Control', 'Content-Encoding', 'Vary', 'Content-Language'];

function showExchange(view, title, answer) {
  const rows = [el('tr', {}, el('th', {}, 'status'), el('td', {}, String(answer.status)))];
  for (const name of SHOWN_HEADERS) {
    const value = header(answer, name);
    if (value !== null) rows.push(el('tr', {}, el('th', {}, name), el('td', {}, value)));
  }
  rows.push(el('tr', {}, el('th', {}, 'bytes sent'), el('td', {}, String(answer.bytes))));
  let pretty = answer.body;
  try { pretty = JSON.stringify(JSON.parse(answer.body), null, 2); } catch { /* not JSON: as it came */ }
  const request = answer.request
    ? el('p', { class: 'request' }, el('code', {}, `GET ${answer.request.target}`),
      answer.request.headers.map(([name, value]) => el('code', {}, `${name}: ${value}`)))
    : null;
  view.details.append(
    el('h3', {}, title),
    request,
    el('table', { class: 'headers', 'data-phase': title.toLowerCase() }, el('tbody', {}, rows)),
    el('details', {}, el('summary', {}, `${title} JSON`), el('pre', { class: 'json' }, pretty)));
  if (title === 'Skeleton') view.details.append(el('h3', {}, 'Warnings'), view.warnings);
}

// MARK: Controls

function drawControls(view) {
  const { found } = view;
  const fields = [];
  const alternatives = found ? [...new Set(found.screen.variants.map((variant) => variant.alternative))] : [];
  fields.push(textControl('version', 'App version', view.controls.version, 'e.g. 2.1 (none: the oldest app)'));
  if (alternatives.length > 1) {
    fields.push(el('label', {}, 'Alternative', selectControl('alternative', ['', ...alternatives], view.controls.alternative)));
  } else {
    fields.push(textControl('alternative', 'Alternative', view.controls.alternative, 'default'));
  }
  fields.push(textControl('user', 'User id (experiment bucket)', view.controls.user, 'none'));
  fields.push(textControl('platform', 'Platform', view.controls.platform, 'e.g. ios, android'));
  fields.push(textControl('language', 'Accept-Language', view.controls.language, 'e.g. pt-BR, en;q=0.8'));
  const gzip = el('input', { type: 'checkbox', 'data-control': 'gzip', checked: view.controls.gzip !== '0' });
  fields.push(el('label', { class: 'inline' }, gzip, ' Accept gzip'));
  if (found) {
    for (const name of found.screen.parameter_order) {
      const parameter = found.screen.parameters[name];
      const value = /^\{.*\}$/.test(found.params[name] || '') ? '' : found.params[name];
      fields.push(textControl(`path:${name}`, `{${name}} (path)`, value, describeParameter(parameter)));
    }
    const query = {};
    for (const variant of found.screen.variants) Object.assign(query, variant.query);
    for (const [name, parameter] of Object.entries(query).sort()) {
      const hint = parameter.default !== null && parameter.default !== undefined ? `default ${parameter.default}` : (parameter.required ? 'required' : describeParameter(parameter));
      fields.push(textControl(`query:${name}`, `${name} (query)`, view.query[name], hint));
    }
    // Values in the URL that no variant declares still go to the screen (it ignores them).
    for (const name of Object.keys(view.query).filter((name) => !(name in query))) {
      fields.push(textControl(`query:${name}`, `${name} (query, not declared)`, view.query[name], ''));
    }
  }
  const panel = el('div', { class: 'fields' }, el('h2', {}, 'What the app sends'), fields,
    el('p', { class: 'muted' }, 'Changes apply at once and go into this page\'s URL: copy it to share this view.'));
  panel.addEventListener('change', () => applyControls(panel, view));
  return panel;
}

function textControl(name, label, value, placeholder) {
  return el('label', {}, label, el('input', { type: 'text', 'data-control': name, value: value || '', placeholder, spellcheck: 'false' }));
}

function selectControl(name, options, value) {
  const select = el('select', { 'data-control': name });
  for (const option of options) {
    select.append(el('option', { value: option, selected: option === (value || '') }, option || '(chosen by the server)'));
  }
  return select;
}

function applyControls(panel, view) {
  const controls = {};
  const query = {};
  const params = { ...(view.found ? view.found.params : {}) };
  for (const input of panel.querySelectorAll('[data-control]')) {
    const name = input.dataset.control;
    const value = input.type === 'checkbox' ? (input.checked ? '' : '0') : input.value.trim();
    if (name.startsWith('path:')) params[name.slice(5)] = value;
    else if (name.startsWith('query:')) query[name.slice(6)] = value;
    else controls[name] = value;
  }
  const path = view.found ? fillPath(view.found.screen.name, params) : view.path;
  history.pushState(null, '', previewURL(path, { ...controls, ...query }));
  draw();
}

// MARK: Components

/** The components of a skeleton, filled with the data entries there are (by identifier). */
function drawComponents(components, filled, view) {
  return components.map((component) => {
    const hasData = component.identifier in filled;
    const content = hasData ? { ...component.content, ...filled[component.identifier] } : component.content;
    const placeholder = Boolean(component.requires_data) && !hasData;
    const node = drawComponent(component.name, content || {}, view, placeholder);
    node.dataset.identifier = component.identifier;
    // A list that continues: the control an app shows at its end (or loads as it scrolls).
    if (view.pages && view.pages[component.identifier]) {
      const more = el('button', { class: 'button button-secondary more', type: 'button', 'data-more': component.identifier }, 'More');
      more.addEventListener('click', () => loadMore(view, component.identifier));
      node.append(more);
    }
    return node;
  });
}

function drawComponent(name, content, view, placeholder) {
  switch (name) {
    case 'label_component': {
      const kind = ['title', 'subtitle', 'body'].includes(content.kind) ? content.kind : 'body';
      return el('p', { class: `label label-${kind}${placeholder ? ' placeholder' : ''}` }, String(content.value ?? ''));
    }
    case 'button_component': return drawButton(content, view);
    case 'text_field_component':
      return el('input', { class: 'text-field', type: content.is_secure ? 'password' : 'text', placeholder: content.placeholder || '', 'aria-label': content.placeholder || 'text field' });
    case 'spacer_component': return el('div', { class: 'spacer' });
    case 'collection_component': {
      const items = Array.isArray(content.values) ? content.values : [];
      const list = el('div', { class: `collection${placeholder ? ' placeholder-list' : ''}`, 'data-component-name': content.component_name || '' });
      for (const item of items) {
        list.append(drawComponent(content.component_name, item && typeof item === 'object' ? item : {}, view, false));
      }
      if (placeholder && items.length === 0) list.append(el('div', { class: 'placeholder-row' }), el('div', { class: 'placeholder-row' }));
      return list;
    }
    default: return drawCustom(name, content, view);
  }
}

function drawButton(content, view) {
  const kind = ['primary', 'secondary', 'danger'].includes(content.kind) ? content.kind : 'primary';
  const enabled = content.is_enabled !== false;
  const classes = `button button-${kind}${enabled ? '' : ' disabled'}`;
  if (!enabled) return el('span', { class: classes, 'aria-disabled': 'true' }, String(content.title ?? ''));
  return actionElement(content.action, view, classes, String(content.title ?? ''));
}

/** A navigation opens the target's preview (with this page's controls); other actions say what the app receives. */
function actionElement(action, view, classes, ...children) {
  if (action && action.identifier === 'navigation' && action.content && typeof action.content.interface_identifier === 'string') {
    const target = action.content.interface_identifier;
    const [targetPath, targetQuery] = target.split('?');
    const values = { ...view.controls };
    for (const [name, value] of new URLSearchParams(targetQuery || '')) values[name] = value;
    return el('a', { class: classes, href: previewURL(targetPath.replace(/^\/+/, ''), values), 'data-action': 'navigation' }, ...children);
  }
  if (!action) return el('div', { class: classes }, ...children);
  const button = el('button', { type: 'button', class: classes, 'data-action': action.identifier }, ...children);
  const submits = action.identifier === 'executable' && action.content
    ? view.actions.find((declared) => declared.name === action.content.name) : null;
  if (submits) {
    button.dataset.submits = submits.name;
    button.addEventListener('click', () => submit(submits, view));
  } else {
    button.addEventListener('click', () => toast(`The app receives the action ${JSON.stringify(action)}`));
  }
  return button;
}

// MARK: Actions

/**
 * An executable button named like one of the variant's actions submits it, as an app does: the
 * text fields named like its inputs, as JSON, to POST /screens/<path>/actions/<name> with the
 * page's headers. The answer's patch is applied to the screen; its next action is shown (and a
 * navigation is a link to the target's preview).
 */
async function submit(action, view) {
  const inputs = {};
  for (const field of view.phone.querySelectorAll('input.text-field')) {
    const name = field.dataset.identifier;
    if (name && name in action.inputs && field.value !== '') inputs[name] = field.value;
  }
  const headers = { 'Content-Type': 'application/json' };
  if (view.controls.version) headers['X-Taksi-Version'] = view.controls.version;
  if (view.controls.alternative) headers['X-Taksi-Alternative'] = view.controls.alternative;
  if (view.controls.user) headers['X-Taksi-User'] = view.controls.user;
  if (view.controls.platform) headers['X-Taksi-Platform'] = view.controls.platform;
  if (view.controls.language) headers['Accept-Language'] = view.controls.language;
  if (view.revision) headers['X-Taksi-Skeleton'] = view.revision;
  const target = `/screens/${view.path}/actions/${encodeURIComponent(action.name)}`;
  const body = JSON.stringify({ inputs });
  let status = 0;
  let text = '';
  try {
    const response = await fetch(target, { method: 'POST', headers, body, cache: 'no-store' });
    status = response.status;
    text = await response.text();
  } catch (error) {
    text = `the server did not answer: ${error.message}`;
  }
  if (view.generation !== state.generation) return;
  let answer = null;
  try { answer = JSON.parse(text); } catch { /* shown as it came */ }
  const entries = answer && Array.isArray(answer.interface_data) ? answer.interface_data : [];
  // Typed text stays, as in an app: the screen is redrawn with the patch and the fields' values.
  const typed = new Map([...view.phone.querySelectorAll('input.text-field')].map((field) => [field.dataset.identifier, field.value]));
  for (const entry of entries) view.filled[entry.identifier] = entry.content;
  clear(view.phone);
  view.phone.append(...drawComponents(view.components, view.filled, view));
  for (const field of view.phone.querySelectorAll('input.text-field')) field.value = typed.get(field.dataset.identifier) ?? '';
  document.getElementById('main').dataset.submitted = `${action.name} ${status}`;

  const rows = [el('tr', {}, el('th', {}, 'status'), el('td', {}, String(status))),
    el('tr', {}, el('th', {}, 'outcome'), el('td', {}, answer && answer.outcome ? String(answer.outcome) : '-'))];
  const then = answer && answer.then;
  let next = null;
  if (then && then.identifier === 'navigation' && then.content && typeof then.content.interface_identifier === 'string') {
    next = el('p', { class: 'then' }, 'then: ', actionElement(then, view, 'then-link', `open ${then.content.interface_identifier}`));
  } else if (then) {
    next = el('p', { class: 'then' }, `then: the app receives the action ${JSON.stringify(then)}`);
  }
  let pretty = text;
  try { pretty = JSON.stringify(JSON.parse(text), null, 2); } catch { /* as it came */ }
  view.details.append(
    el('h3', {}, `Action ${action.name}`),
    el('p', { class: 'request' }, el('code', {}, `POST ${target}`), el('code', {}, body)),
    el('table', { class: 'headers', 'data-phase': 'action' }, el('tbody', {}, rows)),
    next,
    el('details', { open: '' }, el('summary', {}, 'Answer JSON'), el('pre', { class: 'json' }, pretty)));
  toast(`${action.name}: ${status}${answer && answer.outcome ? ` (${answer.outcome})` : ''}`);
}

function drawCustom(name, content, view) {
  const schema = state.catalog.components[name];
  if (!schema) {
    return el('div', { class: 'custom unknown' }, `${name}: no such component type; the app would show nothing for this screen.`);
  }
  const rows = [];
  const images = [];
  let action = null;
  for (const field of schema.fields) {
    const value = content[field.name];
    if (field.type === 'action') {
      action = value || null;
      continue;
    }
    if (value === undefined || value === null) continue;
    if (field.type === 'url' && typeof value === 'string' && looksLikeImage(field.name, value)) {
      const image = el('img', { src: value, alt: field.name, title: value, referrerpolicy: 'no-referrer' });
      // An image that does not load (offline, a placeholder host) leaves its frame, not a broken icon.
      image.addEventListener('error', () => image.classList.add('broken'));
      images.push(el('div', { class: 'image-frame', 'data-field': field.name }, image));
      continue;
    }
    const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
    rows.push(el('div', { class: `field field-${field.type}` }, el('span', { class: 'field-name' }, field.name), el('span', { class: 'field-value' }, text)));
  }
  const card = el('div', { class: 'custom-body' },
    el('div', { class: 'custom-name' }, name),
    el('div', { class: 'custom-row' }, images.length ? el('div', { class: 'images' }, images) : null, el('div', { class: 'fields' }, rows)));
  return actionElement(action, view, 'custom', card);
}

function looksLikeImage(name, url) {
  if (!/^https?:\/\//i.test(url)) return false;
  return /\.(png|jpe?g|gif|webp|svg|avif)(\?|#|$)/i.test(url) || /(icon|image|img|avatar|photo|logo|picture|thumbnail)/i.test(name);
}

function toast(message) {
  const node = el('div', { class: 'toast', role: 'status' }, message);
  document.body.append(node);
  setTimeout(() => node.remove(), 4000);
}

window.addEventListener('popstate', () => draw());
document.addEventListener('DOMContentLoaded', () => {
  listen();
  draw();
});
