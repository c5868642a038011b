// dg-opt's diagnostics: `file:line:col: error: message`, the source line and carets under the
// op, for every op parsed from a file, with or without a loc(...); parse errors, verifier
// errors and pass failures alike. Inputs are in inputs/ (one failure each).

// An op without a loc(...) is reported where it was parsed; the op itself follows.
// RUN: not dg-opt %S/inputs/bad-shift.mlir 2>&1 | filecheck %s --check-prefix=SHIFT --match-full-lines --strict-whitespace
// SHIFT:{{.*}}inputs/bad-shift.mlir:3:8: error: 'dghw.rescale' op shifts must lie in [2, 62] (TOSA SINGLE_ROUND)
// SHIFT-NEXT:  %r = dghw.rescale %acc {multiplier = array<i32: 1073741824>, shift = array<i32: 99>, input_zp = 0 : i32, output_zp = 0...
// SHIFT-NEXT:       ^^^^^^^^^^^^
// SHIFT-NEXT:{{.*}}inputs/bad-shift.mlir:3:8: note: see current operation:
// SHIFT-NEXT:%r = "dghw.rescale"(%acc) <{multiplier = array<i32: 1073741824>, shift = array<i32: 99>, input_zp = 0 : i32, output_z...
// SHIFT-EMPTY:

// An op with a loc(...) is reported there (the user's model source), with a note where it
// was parsed. This file's chunks are split; line numbers count from the top of the file.
// RUN: not dg-opt %s --split-input-file -o /dev/null 2>&1 | filecheck %s --check-prefix=LOC --match-full-lines --strict-whitespace
// LOC:model.py:12:3: error: 'dghw.rescale' op 'shift' must have 1 elements, got 2
// LOC-NEXT:{{.*}}dg-opt-diagnostics.mlir:[[# @LINE + 11]]:8: note: parsed here
// LOC-NEXT:  %r = dghw.rescale %acc {multiplier = array<i32: 1073741824>, shift = array<i32: 30, 30>, input_zp = 0 : i32, output_zp...
// LOC-NEXT:       ^^^^^^^^^^^^
// LOC-NEXT:model.py:12:3: note: see current operation:
// LOC-NEXT:%r = "dghw.rescale"(%acc) <{multiplier = array<i32: 1073741824>, shift = array<i32: 30, 30>, input_zp = 0 : i32, outp...
// LOC-EMPTY:
func.func @fine(%acc: tensor<?x4xi32>) {
  func.return
}
// -----
func.func @bad(%acc: tensor<?x4xi32>) -> tensor<?x4xi8> {
  %r = dghw.rescale %acc {multiplier = array<i32: 1073741824>, shift = array<i32: 30, 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x4xi32> -> tensor<?x4xi8> loc("model.py":12:3)
  func.return %r : tensor<?x4xi8>
}

// A parse error in a line of 6,000 characters quotes 120 of them, around the column.
// RUN: not dg-opt %S/inputs/long-line-parse-error.mlir 2>&1 | filecheck %s --check-prefix=PARSE --match-full-lines --strict-whitespace
// PARSE:{{.*}}inputs/long-line-parse-error.mlir:3:6075: error: undefined symbol alias '#bogus'
// PARSE-NEXT:...7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F"> : tensor<3000xi8>, note = #bogus} : tensor<3000xi8>
// PARSE-NEXT:                                                                                                        ^
// PARSE-EMPTY:

// A dg pass that cannot convert ops reports each at its op, the first with the op printed,
// at most five; never the module. Here: a dgtorch module given to the dghw-to-TOSA pass.
// RUN: not dg-opt %S/inputs/dgtorch-relus.mlir -p convert-dghw-to-tosa 2>&1 | filecheck %s --check-prefix=STAGE --match-full-lines --strict-whitespace
// STAGE:{{.*}}inputs/dgtorch-relus.mlir:3:8: error: pass 'convert-dghw-to-tosa' failed: 'dgtorch.relu': no TOSA 1.0 lowering for 'dgtorch.relu': convert-dghw-to-tosa takes dghw modules (docs/tosa.md lists each dghw op's TOSA form)
// STAGE-NEXT:  %a = dgtorch.relu %x : tensor<?x4xf32> -> tensor<?x4xf32>
// STAGE-NEXT:       ^^^^^^^^^^^^
// STAGE-NEXT:{{.*}}inputs/dgtorch-relus.mlir:3:8: note: see current operation:
// STAGE-NEXT:%a = "dgtorch.relu"(%x) : (tensor<1x4xf32>) -> tensor<?x4xf32>
// STAGE-NEXT:{{.*}}inputs/dgtorch-relus.mlir:4:8: error: pass 'convert-dghw-to-tosa' failed: 'dgtorch.relu': {{.*}}
// STAGE-NEXT:  %b = dgtorch.relu %a : tensor<?x4xf32> -> tensor<?x4xf32>
// STAGE-NEXT:       ^^^^^^^^^^^^
// STAGE:{{.*}}inputs/dgtorch-relus.mlir:7:8: error: pass 'convert-dghw-to-tosa' failed: 'dgtorch.relu': {{.*}}
// STAGE-NEXT:  %e = dgtorch.relu %d : tensor<?x4xf32> -> tensor<?x4xf32>
// STAGE-NEXT:       ^^^^^^^^^^^^
// STAGE-NEXT:{{.*}}inputs/dgtorch-relus.mlir: note: 2 more op(s) the pass could not convert are not shown
// STAGE-EMPTY:

// A pass option the module does not matter for: one line, no op, no module.
// RUN: not dg-opt %S/inputs/dgtorch-relus.mlir -p 'convert-dghw-to-tosa{batch=0}' 2>&1 | filecheck %s --check-prefix=BATCH --match-full-lines --strict-whitespace
// BATCH:{{.*}}inputs/dgtorch-relus.mlir: error: pass 'convert-dghw-to-tosa' failed: 'builtin.module': batch must be >= 1, got 0
// BATCH-EMPTY:
