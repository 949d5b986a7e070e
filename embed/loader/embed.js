/* Gable's embed loader (docs/embed.md). Mounts one iframe per [data-flow] element,
 * also for elements added later, sizes it to its content and turns the flow's messages
 * into gable:* CustomEvents on the element. Plain JavaScript; no framework. */
(function () {
  'use strict';
  if (window.__gableEmbed) return;
  window.__gableEmbed = 1;

  var FLOWS = { 'rental-application': 'Rental application', booking: 'Booking', payment: 'Payment', 'tenant-portal': 'Tenant portal' };
  var script = document.currentScript;
  // Gable's origin is where this file was loaded from: the flow pages live there too.
  var base = script ? new URL(script.src) : null;
  if (!base) return;
  var gable = base.origin;
  var frames = {};
  var seq = 0;

  function emit(el, type, detail) {
    el.dispatchEvent(new CustomEvent('gable:' + type, { bubbles: true, detail: detail }));
  }

  function id() {
    var a = new Uint8Array(9);
    crypto.getRandomValues(a);
    return 'f' + ++seq + Array.prototype.map.call(a, function (b) { return (b % 36).toString(36); }).join('');
  }

  function mount(el) {
    if (el.__gable) return;
    var flow = el.getAttribute('data-flow');
    var token = el.getAttribute('data-token') || '';
    el.__gable = 1;
    var frame = id();
    if (!FLOWS[flow]) {
      emit(el, 'error', { flow: flow, frame: frame, code: 'unknown_flow', message: 'data-flow must be one of: ' + Object.keys(FLOWS).join(', ') });
      return;
    }
    var f = document.createElement('iframe');
    var q = new URLSearchParams({ origin: location.origin, frame: frame });
    // The token goes in the fragment, which browsers never send to a server: no proxy,
    // CDN or log between here and Gable sees it. The flow reads it and drops it.
    f.src = gable + '/embed/' + flow + '?' + q + '#' + new URLSearchParams({ token: token });
    f.title = FLOWS[flow];
    f.setAttribute('referrerpolicy', 'no-referrer');
    f.setAttribute('allow', '');
    f.style.cssText = 'display:block;width:100%;border:0;overflow:hidden;height:240px';
    frames[frame] = { el: el, iframe: f, flow: flow };
    f.addEventListener('load', function () {
      if (f.contentWindow) f.contentWindow.postMessage({ gable: 1, frame: frame, type: 'ping' }, gable);
    });
    el.appendChild(f);
  }

  function onMessage(e) {
    var m = e.data;
    if (e.origin !== gable || !m || m.gable !== 1 || typeof m.frame !== 'string') return;
    var entry = frames[m.frame];
    // The message must come from that very frame's window, not merely from Gable.
    if (!entry || e.source !== entry.iframe.contentWindow) return;
    var d = { flow: entry.flow, frame: m.frame };
    var h = Math.ceil(+m.height);
    if (h > 0 && h < 100000) {
      entry.iframe.style.height = h + 'px';
      d.height = h;
    }
    if (m.type === 'ready' || m.type === 'resize') {
      emit(entry.el, m.type, d);
    } else if (m.type === 'completed') {
      d.object = String(m.object);
      d.id = String(m.id);
      d.status = m.status == null ? null : String(m.status);
      emit(entry.el, 'completed', d);
    } else if (m.type === 'error') {
      d.code = String(m.code);
      d.message = String(m.message);
      emit(entry.el, 'error', d);
    }
  }

  function scan(root) {
    if (root.nodeType !== 1) return;
    if (root.matches('[data-flow]')) mount(root);
    var list = root.querySelectorAll('[data-flow]');
    for (var i = 0; i < list.length; i++) mount(list[i]);
  }

  window.addEventListener('message', onMessage);
  function start() {
    scan(document.documentElement);
    new MutationObserver(function (records) {
      records.forEach(function (r) {
        for (var i = 0; i < r.addedNodes.length; i++) scan(r.addedNodes[i]);
      });
    }).observe(document.documentElement, { childList: true, subtree: true });
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
