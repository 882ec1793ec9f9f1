// Renders TeX with MathJax 3 as Jupyter configures it, for tests/test_reprs_render.py.
// stdin: JSON [{"id", "tex", "display"}]; stdout: JSON [{"id", "error", "mathml"}].
// The packages are MathJax's default TeX set (base, ams, newcommand, noundefined, configmacros), without
// textmacros, as in JupyterLab and Notebook 7: text-mode escapes such as \_ inside \text{} are shown literally.
const {mathjax} = require('mathjax-full/js/mathjax.js');
const {TeX} = require('mathjax-full/js/input/tex.js');
const {liteAdaptor} = require('mathjax-full/js/adaptors/liteAdaptor.js');
const {RegisterHTMLHandler} = require('mathjax-full/js/handlers/html.js');
require('mathjax-full/js/input/tex/base/BaseConfiguration.js');
require('mathjax-full/js/input/tex/ams/AmsConfiguration.js');
require('mathjax-full/js/input/tex/newcommand/NewcommandConfiguration.js');
require('mathjax-full/js/input/tex/noundefined/NoUndefinedConfiguration.js');
require('mathjax-full/js/input/tex/configmacros/ConfigMacrosConfiguration.js');
const {SerializedMmlVisitor} = require('mathjax-full/js/core/MmlTree/SerializedMmlVisitor.js');
const {STATE} = require('mathjax-full/js/core/MathItem.js');

RegisterHTMLHandler(liteAdaptor());
const tex = new TeX({packages: ['base', 'ams', 'newcommand', 'noundefined', 'configmacros'],
                     formatError: (jax, err) => { throw err; }});
const doc = mathjax.document('', {InputJax: tex});
const visitor = new SerializedMmlVisitor();
let input = '';
process.stdin.on('data', d => input += d);
process.stdin.on('end', () => {
  const out = [];
  for (const item of JSON.parse(input)) {
    try {
      const mml = doc.convert(item.tex, {display: item.display !== false, end: STATE.CONVERT});
      out.push({id: item.id, error: null, mathml: visitor.visitTree(mml)});
    } catch (e) {
      out.push({id: item.id, error: String(e.message || e), mathml: null});
    }
  }
  process.stdout.write(JSON.stringify(out));
});
