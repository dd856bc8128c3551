// Type-checks many small programs in one compiler process (tests/test_tsc.py): each program is a set of
// files compiled together, as `tsc --noEmit` would with the given options; the library files are parsed
// once and shared. Reads {"options": {...}, "programs": {name: {file: text}}} on stdin and writes
// {name: {file: ["TS2345", ...]}} on stdout.
"use strict";
const ts = require("typescript");

const request = JSON.parse(require("fs").readFileSync(0, "utf8"));
const { options, errors } = ts.convertCompilerOptionsFromJson(request.options, "/");
if (errors.length) throw new Error(ts.flattenDiagnosticMessageText(errors[0].messageText, "\n"));
const base = ts.createCompilerHost(options);
const shared = new Map(); // the compiler's own library files, parsed once for every program
const result = {};
for (const [name, files] of Object.entries(request.programs)) {
  const host = {
    ...base,
    fileExists: (f) => Object.hasOwn(files, f) || base.fileExists(f),
    readFile: (f) => (Object.hasOwn(files, f) ? files[f] : base.readFile(f)),
    getSourceFile(f, language) {
      if (Object.hasOwn(files, f)) return ts.createSourceFile(f, files[f], language, true);
      if (!shared.has(f)) shared.set(f, base.getSourceFile(f, language));
      return shared.get(f);
    },
  };
  const program = ts.createProgram(Object.keys(files), options, host);
  const codes = Object.fromEntries(Object.keys(files).map((f) => [f, []]));
  // Only the given files are checked (the library's own diagnostics are the compiler's, and the costliest).
  const ours = Object.keys(files).map((f) => program.getSourceFile(f));
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...ours.flatMap((f) => [...program.getSyntacticDiagnostics(f), ...program.getSemanticDiagnostics(f)]),
  ];
  for (const d of diagnostics) {
    const file = d.file ? d.file.fileName : "(global)";
    (codes[file] ??= []).push(`TS${d.code}`);
  }
  result[name] = codes;
}
process.stdout.write(JSON.stringify(result));
