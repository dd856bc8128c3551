"use strict";(self.rspackChunkjupyter_sandbox=self.rspackChunkjupyter_sandbox||[]).push([[266],{285(e,r,a){var s=a(601),t=a.n(s),o=a(314),n=(a.n(o))()(t());n.push([e.id,`/* The run card (card.js): built on timeline.css's variables, light and dark themes alike. */
.jsbx-card { display: flex; flex-direction: column; gap: 4px; padding: 6px 8px; border: 1px solid var(--jsbx-border); border-radius: 4px; background: var(--jsbx-bg); }
.jsbx-card-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 6px; }
.jsbx-hint { color: var(--jsbx-amber); font-size: 0.92em; }
.jsbx-pending { border-left: 3px solid var(--jsbx-amber); background: var(--jsbx-amber-bg); padding: 4px 8px; display: flex; flex-direction: column; gap: 4px; }
.jsbx-answered { border-left: 3px solid var(--jsbx-green); padding: 2px 8px; }
.jsbx-buttons { display: flex; gap: 6px; align-items: center; flex-wrap: wrap; }
.jsbx-btn { font: inherit; padding: 2px 10px; border-radius: 3px; border: 1px solid var(--jsbx-border); background: var(--jsbx-bg2); color: var(--jsbx-fg); cursor: pointer; }
.jsbx-btn:disabled, .jsbx-card input:disabled, .jsbx-card textarea:disabled { opacity: 0.5; cursor: not-allowed; }
.jsbx-approve { background: var(--jsbx-green); border-color: var(--jsbx-green); color: #fff; }
.jsbx-reject { background: var(--jsbx-red); border-color: var(--jsbx-red); color: #fff; }
.jsbx-card input, .jsbx-card textarea { font: inherit; color: var(--jsbx-fg); background: var(--jsbx-bg); border: 1px solid var(--jsbx-border); border-radius: 3px; padding: 1px 4px; }
.jsbx-card textarea { width: 100%; box-sizing: border-box; font-family: var(--jsbx-mono); }
.jsbx-note { color: var(--jsbx-muted); }
.jsbx-rows { font-size: 0.95em; }
.jsbx-window { position: relative; overflow-y: auto; border: 1px solid var(--jsbx-border); border-radius: 3px; }
.jsbx-window .jsbx-spacer { position: relative; }
.jsbx-window .jsbx-row { position: absolute; left: 0; right: 0; height: 22px; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
.jsbx-row { display: flex; gap: 6px; align-items: baseline; min-height: 22px; line-height: 22px; padding: 0 4px; }
.jsbx-row .jsbx-seq { color: var(--jsbx-muted); min-width: 4.5em; font-family: var(--jsbx-mono); font-size: 0.85em; }
.jsbx-row .jsbx-kind { color: var(--jsbx-muted); min-width: 4em; }
.jsbx-row .jsbx-main { flex: 1; min-width: 0; overflow: hidden; text-overflow: ellipsis; }
.jsbx-v { display: inline; }
.jsbx-v summary { display: inline; cursor: pointer; }
.jsbx-output .jsbx-v code { font-weight: 600; }
.jsbx-card-timeline > summary, .jsbx-console > summary, .jsbx-earlier > summary { cursor: pointer; }
.jsbx-c-warn { color: var(--jsbx-amber); } .jsbx-c-error { color: var(--jsbx-red); }
.jsbx-pill-wait { background: var(--jsbx-amber-bg); color: var(--jsbx-amber); }
.jsbx-journal { margin-top: 4px; font-size: 0.9em; }
/* Readable on both themes: a filled pill, not coloured text on the theme's grey. */
.jsbx-card .jsbx-pill-ok { color: #fff; background: var(--jsbx-green); }
.jsbx-card .jsbx-pending { margin: 2px 0; }
.jsbx-traceback { display: inline; }
.jsbx-traceback summary { display: inline; cursor: pointer; color: var(--jsbx-muted); }
.jsbx-traceback summary::before { content: '▸ '; }
.jsbx-traceback[open] summary::before { content: '▾ '; }
.jsbx-traceback[open] { display: block; }
.jsbx-traceback pre { font-family: var(--jsbx-mono); font-size: 0.85em; white-space: pre; overflow: auto; max-height: 24em; margin: 2px 0; padding: 4px 6px; background: var(--jsbx-bg2); border-radius: 3px; line-height: 1.3; }
.jsbx-input pre, .jsbx-input .jsbx-more pre { font-family: var(--jsbx-mono); font-size: 0.9em; white-space: pre-wrap; overflow-wrap: anywhere; margin: 2px 0; padding: 4px 6px; background: var(--jsbx-bg); border: 1px solid var(--jsbx-border); border-radius: 3px; max-height: 30em; overflow: auto; }
.jsbx-input .jsbx-more > summary, .jsbx-script > summary { cursor: pointer; color: var(--jsbx-muted); }
.jsbx-script pre { font-family: var(--jsbx-mono); font-size: 0.85em; margin: 2px 0; padding: 4px 0; background: var(--jsbx-bg2); border-radius: 3px; overflow: auto; max-height: 30em; line-height: 1.35; }
.jsbx-script-line { display: block; padding: 0 6px; }
.jsbx-script-line[data-error="true"] { background: var(--jsbx-red-bg); box-shadow: inset 3px 0 0 var(--jsbx-red); }
.jsbx-ln { color: var(--jsbx-muted); user-select: none; }
.jsbx-answered-question { border-left-color: var(--jsbx-blue); }
`,""]),a.d(r,{},{A:n})},926(e,r,a){var s=a(601),t=a.n(s),o=a(314),n=(a.n(o))()(t());n.push([e.id,`/*
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
`,""]),a.d(r,{},{A:n})},646(e,r,a){var s=a(601),t=a.n(s),o=a(314),n=a.n(o),i=a(926),b=a(285),x=n()(t());x.i(i.A),x.i(b.A),x.push([e.id,`/* The card's and the timeline's styles live beside their renderer (shared with the static HTML). */
`,""]),a.d(r,{},{A:x})},314(e){e.exports=function(e){var r=[];return r.toString=function(){return this.map(function(r){var a="",s=void 0!==r[5];return r[4]&&(a+="@supports (".concat(r[4],") {")),r[2]&&(a+="@media ".concat(r[2]," {")),s&&(a+="@layer".concat(r[5].length>0?" ".concat(r[5]):""," {")),a+=e(r),s&&(a+="}"),r[2]&&(a+="}"),r[4]&&(a+="}"),a}).join("")},r.i=function(e,a,s,t,o){"string"==typeof e&&(e=[[null,e,void 0]]);var n={};if(s)for(var i=0;i<this.length;i++){var b=this[i][0];null!=b&&(n[b]=!0)}for(var x=0;x<e.length;x++){var l=[].concat(e[x]);s&&n[l[0]]||(void 0!==o&&(void 0===l[5]||(l[1]="@layer".concat(l[5].length>0?" ".concat(l[5]):""," {").concat(l[1],"}")),l[5]=o),a&&(l[2]&&(l[1]="@media ".concat(l[2]," {").concat(l[1],"}")),l[2]=a),t&&(l[4]?(l[1]="@supports (".concat(l[4],") {").concat(l[1],"}"),l[4]=t):l[4]="".concat(t)),r.push(l))}},r}},601(e){e.exports=function(e){return e[1]}},665(e,r,a){a.r(r);var s=a(72),t=a.n(s),o=a(825),n=a.n(o),i=a(659),b=a.n(i),x=a(56),l=a.n(x),d=a(540),p=a.n(d),j=a(113),c=a.n(j),m=a(646),u={};u.styleTagTransform=c(),u.setAttributes=l(),u.insert=b().bind(null,"head"),u.domAPI=n(),u.insertStyleElement=p(),t()(m.A,u);let f=m.A&&m.A.locals?m.A.locals:void 0;a.d(r,{},{default:f})},72(e){var r=[];function a(e){for(var a=-1,s=0;s<r.length;s++)if(r[s].identifier===e){a=s;break}return a}function s(e,s){for(var t={},o=[],n=0;n<e.length;n++){var i=e[n],b=s.base?i[0]+s.base:i[0],x=t[b]||0,l="".concat(b," ").concat(x);t[b]=x+1;var d=a(l),p={css:i[1],media:i[2],sourceMap:i[3],supports:i[4],layer:i[5]};if(-1!==d)r[d].references++,r[d].updater(p);else{var j=function(e,r){var a=r.domAPI(r);return a.update(e),function(r){r?(r.css!==e.css||r.media!==e.media||r.sourceMap!==e.sourceMap||r.supports!==e.supports||r.layer!==e.layer)&&a.update(e=r):a.remove()}}(p,s);s.byIndex=n,r.splice(n,0,{identifier:l,updater:j,references:1})}o.push(l)}return o}e.exports=function(e,t){var o=s(e=e||[],t=t||{});return function(e){e=e||[];for(var n=0;n<o.length;n++){var i=a(o[n]);r[i].references--}for(var b=s(e,t),x=0;x<o.length;x++){var l=a(o[x]);0===r[l].references&&(r[l].updater(),r.splice(l,1))}o=b}}},659(e){var r={};e.exports=function(e,a){var s=function(e){if(void 0===r[e]){var a=document.querySelector(e);if(window.HTMLIFrameElement&&a instanceof window.HTMLIFrameElement)try{a=a.contentDocument.head}catch(e){a=null}r[e]=a}return r[e]}(e);if(!s)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");s.appendChild(a)}},540(e){e.exports=function(e){var r=document.createElement("style");return e.setAttributes(r,e.attributes),e.insert(r,e.options),r}},56(e,r,a){e.exports=function(e){var r=a.nc;r&&e.setAttribute("nonce",r)}},825(e){e.exports=function(e){if("u"<typeof document)return{update:function(){},remove:function(){}};var r=e.insertStyleElement(e);return{update:function(a){var s,t,o;s="",a.supports&&(s+="@supports (".concat(a.supports,") {")),a.media&&(s+="@media ".concat(a.media," {")),(t=void 0!==a.layer)&&(s+="@layer".concat(a.layer.length>0?" ".concat(a.layer):""," {")),s+=a.css,t&&(s+="}"),a.media&&(s+="}"),a.supports&&(s+="}"),(o=a.sourceMap)&&"u">typeof btoa&&(s+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(o))))," */")),e.styleTagTransform(s,r,e.options)},remove:function(){var e;null===(e=r).parentNode||e.parentNode.removeChild(e)}}}},113(e){e.exports=function(e,r){if(r.styleSheet)r.styleSheet.cssText=e;else{for(;r.firstChild;)r.removeChild(r.firstChild);r.appendChild(document.createTextNode(e))}}}}]);