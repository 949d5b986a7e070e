// Starts the embeddable flow (docs/embed.md). The flow page loads this module: its
// policy allows no inline script. The WebAssembly's start function reads the page's
// <meta> tags and mounts the flow into <main id="gable-flow">.
import init from './gable_embed.js';

init({ module_or_path: new URL('gable_embed_bg.wasm', import.meta.url) }).catch(function (e) {
  // The bundle could not start (an old browser, a failed download): say so in the page
  // and to the host page, as the flow would.
  var message = 'The form could not start in this browser. Reload the page to try again.';
  var main = document.getElementById('gable-flow');
  if (main) {
    var box = document.createElement('div');
    box.className = 'cannot';
    box.setAttribute('role', 'alert');
    var h = document.createElement('h1');
    h.textContent = "This form can't be shown";
    var p = document.createElement('p');
    p.textContent = message;
    box.append(h, p);
    main.replaceChildren(box);
  }
  var meta = function (name) {
    var m = document.querySelector('meta[name="' + name + '"]');
    return m ? m.getAttribute('content') || '' : '';
  };
  var origin = meta('gable:parent-origin');
  if (origin && window.parent !== window) {
    window.parent.postMessage({ gable: 1, frame: meta('gable:frame'), type: 'error', code: 'flow_failed', message: message }, origin);
  }
  console.error('gable: the flow could not start', e);
});
