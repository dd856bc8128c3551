"use strict";(self.rspackChunkjupyter_sandbox=self.rspackChunkjupyter_sandbox||[]).push([[266],{926(e,r,a){var t=a(601),s=a.n(t),o=a(314),n=(a.n(o))()(s());n.push([e.id,`/*
 * The run timeline (timeline.js, timeline_html.py). JupyterLab's --jp-*
 * variables give light and dark themes; the fallbacks are for nbconvert
 * HTML and other pages without them. Every class is prefixed jsbx-.
 */
.jsbx-host {
  --jsbx-fg: var(--jp-ui-font-color1, #1f2328);
  --jsbx-muted: var(--jp-ui-font-color2, #656d76);
  --jsbx-bg: var(--jp-layout-color1, transparent);
  --jsbx-bg2: var(--jp-layout-color2, #f3f4f6);
  --jsbx-border: var(--jp-border-color2, #d0d7de);
  --jsbx-red: var(--jp-error-color1, #d1242f);
  --jsbx-red-bg: color-mix(in srgb, var(--jsbx-red) 10%, transparent);
  --jsbx-amber: var(--jp-warn-color1, #bf8700);
  --jsbx-amber-bg: color-mix(in srgb, var(--jsbx-amber) 12%, transparent);
  --jsbx-green: var(--jp-success-color1, #1a7f37);
  --jsbx-blue: var(--jp-brand-color1, #0969da);
  --jsbx-mono: var(--jp-code-font-family, ui-monospace, SFMono-Regular, Menlo, Consolas, monospace);
  color: var(--jsbx-fg);
  font-family: var(--jp-ui-font-family, system-ui, -apple-system, 'Segoe UI', sans-serif);
  font-size: var(--jp-ui-font-size1, 13px);
  line-height: 1.45;
}
.jsbx-timeline { display: flex; flex-direction: column; gap: 2px; max-width: 100%; }
.jsbx-host code, .jsbx-host pre { font-family: var(--jsbx-mono); font-size: 0.92em; }
.jsbx-host pre {
  margin: 2px 0; padding: 4px 6px; background: var(--jsbx-bg2); border-radius: 3px;
  white-space: pre-wrap; word-break: break-word; max-height: 24em; overflow: auto;
}
.jsbx-meta { color: var(--jsbx-muted); font-size: 0.92em; }

/* run header */
.jsbx-run { display: flex; flex-wrap: wrap; align-items: baseline; gap: 6px; }
.jsbx-run-name { font-weight: 600; }
.jsbx-status {
  display: inline-block; padding: 0 6px; border-radius: 8px; font-size: 0.85em; font-weight: 600;
  color: #fff; background: var(--jsbx-muted); text-transform: lowercase;
}
.jsbx-status[data-status='completed'], .jsbx-status[data-status='finished'],
.jsbx-status[data-status='succeeded'], .jsbx-status[data-status='ok'] { background: var(--jsbx-green); }
.jsbx-status[data-status='failed'], .jsbx-status[data-status='error'],
.jsbx-status[data-status='mismatch'] { background: var(--jsbx-red); }
.jsbx-status[data-status='interrupted'], .jsbx-status[data-status='parked'],
.jsbx-status[data-status='waiting'], .jsbx-status[data-status='paused'] { background: var(--jsbx-amber); }
.jsbx-status[data-status='running'] { background: var(--jsbx-blue); }
.jsbx-live { color: var(--jsbx-blue); animation: jsbx-pulse 1.2s ease-in-out infinite; }
@keyframes jsbx-pulse { 50% { opacity: 0.3; } }

.jsbx-progress { display: flex; align-items: center; gap: 8px; margin: 4px 0; }
.jsbx-bar { flex: 0 1 260px; height: 6px; background: var(--jsbx-bg2); border-radius: 3px; overflow: hidden; }
.jsbx-fill { height: 100%; background: var(--jsbx-blue); transition: width 0.2s; }
.jsbx-progress[data-indeterminate='true'] .jsbx-fill { opacity: 0.4; animation: jsbx-pulse 1.2s infinite; }

.jsbx-plan-box { margin: 4px 0; }
.jsbx-plan { list-style: none; margin: 2px 0; padding-left: 4px; }
.jsbx-entry > .jsbx-plan { margin-left: 3.2em; }
.jsbx-plan li[data-done='true'] { color: var(--jsbx-muted); text-decoration: line-through; }
.jsbx-check { font-family: var(--jsbx-mono); }

.jsbx-pending {
  margin: 4px 0; padding: 4px 8px; border-left: 3px solid var(--jsbx-amber); background: var(--jsbx-amber-bg);
}

/* attempts */
.jsbx-part[data-attempt] { margin-left: 2px; padding-left: 8px; border-left: 2px solid var(--jsbx-border); }
.jsbx-attempt-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 6px; margin-top: 6px; }
.jsbx-replayed > summary { color: var(--jsbx-muted); cursor: pointer; }
.jsbx-replayed[open] { opacity: 0.85; }
.jsbx-empty { margin: 2px 0; }

/* entries */
.jsbx-entries { list-style: none; margin: 0; padding: 0; }
.jsbx-entries .jsbx-entries { margin-left: 14px; border-left: 1px dotted var(--jsbx-border); padding-left: 6px; }
.jsbx-entry { padding: 1px 0; }
.jsbx-line { display: flex; align-items: baseline; gap: 6px; min-width: 0; }
.jsbx-seq { color: var(--jsbx-muted); font-family: var(--jsbx-mono); font-size: 0.85em; min-width: 2.6em; text-align: right; }
.jsbx-kind { font-family: var(--jsbx-mono); font-size: 0.85em; color: var(--jsbx-muted); min-width: 5.5em; }
.jsbx-main { flex: 1 1 auto; min-width: 0; overflow-wrap: anywhere; }
.jsbx-line > .jsbx-meta { flex: none; white-space: nowrap; }
.jsbx-label { font-weight: 600; }
.jsbx-name { color: var(--jsbx-muted); }
.jsbx-msg { font-family: var(--jsbx-mono); white-space: pre-wrap; }

.jsbx-mark {
  flex: none; font-size: 0.75em; padding: 0 4px; border-radius: 6px; line-height: 1.5;
  border: 1px solid currentColor;
}
[data-mark='live'] > .jsbx-line > .jsbx-mark, [data-mark='live'] > summary > .jsbx-mark { color: var(--jsbx-green); }
[data-mark='replayed'] > .jsbx-line > .jsbx-mark, [data-mark='replayed'] > summary > .jsbx-mark { color: var(--jsbx-muted); }

.jsbx-pill {
  display: inline-block; margin-left: 4px; padding: 0 5px; border-radius: 6px; font-size: 0.8em;
  background: var(--jsbx-bg2); color: var(--jsbx-fg);
}
.jsbx-pill-ok, .jsbx-pill-outcome-ok { color: var(--jsbx-green); }
.jsbx-pill-fail, .jsbx-pill-outcome-error, .jsbx-pill-limit, .jsbx-pill-level-error { color: #fff; background: var(--jsbx-red); }
.jsbx-pill-level-warn, .jsbx-pill-edited { color: #fff; background: var(--jsbx-amber); }
.jsbx-pill-outcome-open { color: var(--jsbx-blue); }
.jsbx-pill-level-log, .jsbx-pill-level-info, .jsbx-pill-level-debug { margin-left: 0; }
.jsbx-errtext { color: var(--jsbx-red); }

.jsbx-k-interrupt { background: var(--jsbx-amber-bg); border-left: 3px solid var(--jsbx-amber); }
.jsbx-k-answer { border-left: 3px solid var(--jsbx-green); }
.jsbx-k-interrupt, .jsbx-k-answer { padding-right: 4px; }

/* steps */
.jsbx-step > summary { display: flex; align-items: baseline; gap: 6px; cursor: pointer; list-style: none; }
.jsbx-step > summary::before { content: '▸'; color: var(--jsbx-muted); width: 0.8em; }
.jsbx-step[open] > summary::before { content: '▾'; }
.jsbx-step > summary::-webkit-details-marker { display: none; }
.jsbx-step[data-outcome='error'] > summary .jsbx-label { color: var(--jsbx-red); }
.jsbx-k-step-end { margin-left: 14px; }

/* expandable JSON */
.jsbx-json { margin: 0 0 0 3.2em; }
.jsbx-json > summary { cursor: pointer; color: var(--jsbx-muted); font-size: 0.92em; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.jsbx-json > summary code { color: var(--jsbx-fg); }

/* errors and mismatches */
.jsbx-error, .jsbx-mismatch {
  margin: 3px 0 3px 3.2em; padding: 4px 8px; border-left: 3px solid var(--jsbx-red); background: var(--jsbx-red-bg);
}
.jsbx-part > .jsbx-error { margin-left: 0; }
.jsbx-err-title { color: var(--jsbx-red); font-weight: 600; }
.jsbx-where { font-family: var(--jsbx-mono); font-weight: normal; color: var(--jsbx-muted); }
/* No wrapping: the caret line must stay under the column it points at. */
.jsbx-host pre.jsbx-source { background: var(--jsbx-bg); border: 1px solid var(--jsbx-border); white-space: pre; overflow-x: auto; }
.jsbx-mismatch p { margin: 3px 0; }
.jsbx-hint { color: var(--jsbx-muted); font-style: italic; }
.jsbx-diff { border-collapse: collapse; margin: 4px 0; font-size: 0.95em; }
.jsbx-diff th, .jsbx-diff td { border: 1px solid var(--jsbx-border); padding: 2px 8px; text-align: left; vertical-align: top; }
.jsbx-diff thead th { background: var(--jsbx-bg2); }
.jsbx-diff tbody th { color: var(--jsbx-muted); font-weight: normal; }
.jsbx-diff tr.jsbx-differs td { background: var(--jsbx-red-bg); }
.jsbx-diff tr.jsbx-differs th { color: var(--jsbx-red); font-weight: 600; }
.jsbx-diff td pre { margin: 0; background: transparent; padding: 0; }
.jsbx-none { color: var(--jsbx-muted); font-style: italic; }
`,""]),a.d(r,{},{A:n})},646(e,r,a){var t=a(601),s=a.n(t),o=a(314),n=a.n(o),i=a(926),l=n()(s());l.i(i.A),l.push([e.id,`/* The timeline's styles live beside the widget, shared with anywidget. */
`,""]),a.d(r,{},{A:l})},314(e){e.exports=function(e){var r=[];return r.toString=function(){return this.map(function(r){var a="",t=void 0!==r[5];return r[4]&&(a+="@supports (".concat(r[4],") {")),r[2]&&(a+="@media ".concat(r[2]," {")),t&&(a+="@layer".concat(r[5].length>0?" ".concat(r[5]):""," {")),a+=e(r),t&&(a+="}"),r[2]&&(a+="}"),r[4]&&(a+="}"),a}).join("")},r.i=function(e,a,t,s,o){"string"==typeof e&&(e=[[null,e,void 0]]);var n={};if(t)for(var i=0;i<this.length;i++){var l=this[i][0];null!=l&&(n[l]=!0)}for(var b=0;b<e.length;b++){var x=[].concat(e[b]);t&&n[x[0]]||(void 0!==o&&(void 0===x[5]||(x[1]="@layer".concat(x[5].length>0?" ".concat(x[5]):""," {").concat(x[1],"}")),x[5]=o),a&&(x[2]&&(x[1]="@media ".concat(x[2]," {").concat(x[1],"}")),x[2]=a),s&&(x[4]?(x[1]="@supports (".concat(x[4],") {").concat(x[1],"}"),x[4]=s):x[4]="".concat(s)),r.push(x))}},r}},601(e){e.exports=function(e){return e[1]}},665(e,r,a){a.r(r);var t=a(72),s=a.n(t),o=a(825),n=a.n(o),i=a(659),l=a.n(i),b=a(56),x=a.n(b),d=a(540),p=a.n(d),u=a(113),c=a.n(u),j=a(646),m={};m.styleTagTransform=c(),m.setAttributes=x(),m.insert=l().bind(null,"head"),m.domAPI=n(),m.insertStyleElement=p(),s()(j.A,m);let f=j.A&&j.A.locals?j.A.locals:void 0;a.d(r,{},{default:f})},72(e){var r=[];function a(e){for(var a=-1,t=0;t<r.length;t++)if(r[t].identifier===e){a=t;break}return a}function t(e,t){for(var s={},o=[],n=0;n<e.length;n++){var i=e[n],l=t.base?i[0]+t.base:i[0],b=s[l]||0,x="".concat(l," ").concat(b);s[l]=b+1;var d=a(x),p={css:i[1],media:i[2],sourceMap:i[3],supports:i[4],layer:i[5]};if(-1!==d)r[d].references++,r[d].updater(p);else{var u=function(e,r){var a=r.domAPI(r);return a.update(e),function(r){r?(r.css!==e.css||r.media!==e.media||r.sourceMap!==e.sourceMap||r.supports!==e.supports||r.layer!==e.layer)&&a.update(e=r):a.remove()}}(p,t);t.byIndex=n,r.splice(n,0,{identifier:x,updater:u,references:1})}o.push(x)}return o}e.exports=function(e,s){var o=t(e=e||[],s=s||{});return function(e){e=e||[];for(var n=0;n<o.length;n++){var i=a(o[n]);r[i].references--}for(var l=t(e,s),b=0;b<o.length;b++){var x=a(o[b]);0===r[x].references&&(r[x].updater(),r.splice(x,1))}o=l}}},659(e){var r={};e.exports=function(e,a){var t=function(e){if(void 0===r[e]){var a=document.querySelector(e);if(window.HTMLIFrameElement&&a instanceof window.HTMLIFrameElement)try{a=a.contentDocument.head}catch(e){a=null}r[e]=a}return r[e]}(e);if(!t)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");t.appendChild(a)}},540(e){e.exports=function(e){var r=document.createElement("style");return e.setAttributes(r,e.attributes),e.insert(r,e.options),r}},56(e,r,a){e.exports=function(e){var r=a.nc;r&&e.setAttribute("nonce",r)}},825(e){e.exports=function(e){if("u"<typeof document)return{update:function(){},remove:function(){}};var r=e.insertStyleElement(e);return{update:function(a){var t,s,o;t="",a.supports&&(t+="@supports (".concat(a.supports,") {")),a.media&&(t+="@media ".concat(a.media," {")),(s=void 0!==a.layer)&&(t+="@layer".concat(a.layer.length>0?" ".concat(a.layer):""," {")),t+=a.css,s&&(t+="}"),a.media&&(t+="}"),a.supports&&(t+="}"),(o=a.sourceMap)&&"u">typeof btoa&&(t+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(o))))," */")),e.styleTagTransform(t,r,e.options)},remove:function(){var e;null===(e=r).parentNode||e.parentNode.removeChild(e)}}}},113(e){e.exports=function(e,r){if(r.styleSheet)r.styleSheet.cssText=e;else{for(;r.firstChild;)r.removeChild(r.firstChild);r.appendChild(document.createTextNode(e))}}}}]);