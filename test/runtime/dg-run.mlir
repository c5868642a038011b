// dg-run on a saved dghw module: .npy arrays in and out, and clear diagnostics for bad input.
// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.array([[1, -2, 3], [100, 127, -128]], dtype=np.int8))"
// RUN: python -c "import numpy as np; np.save('%t.wide.npy', np.array([[1, -2, 3]], dtype=np.int32))"
// RUN: dg-run %s --input %t.x.npy --output %t.y.npy
// RUN: python -c "import numpy as np; y = np.load('%t.y.npy'); print(y.dtype, y.tolist())" | filecheck %s
// RUN: dg-run %s -i %t.x.npy | filecheck %s --check-prefix=PRINT
// RUN: dg-run %s -i %t.wide.npy -i %t.wide.npy --function twice -o %t.twice.npy
// RUN: python -c "import numpy as np; y = np.load('%t.twice.npy'); print(y.dtype, y.tolist())" | filecheck %s --check-prefix=TWICE

// Hand-computed from docs/dghw.md, with input_zp = 1:
//   row 0: x - 1 = [0, -3, 2]      acc = [11 + 0 - 6 + 6, -10 + 0 + 0 + 2] = [11, -8]
//   row 1: x - 1 = [99, 126, -129] acc = [11 + 99 + 252 - 387, -10 - 99 - 129] = [-25, -238]
//   rescale by 2^30 * 2^-31 = 1/2, rounding halves toward +inf: [6, -4], [-12, -119]; + 2.
// CHECK: int8 {{\[}}[8, -2], [-10, -117]]
// PRINT:      result #0: int8[2, 2]
// PRINT-NEXT: {{\[}}[   8   -2]
// PRINT-NEXT:  [ -10 -117]]
// TWICE: int32 {{\[}}[2, -4, 6]]

// --float: float32 in, quantized with @main's dghw.scale = 0.5, zero_point = 1 (the int8 input
// above); float32 out, dequantized with its result's 0.25 and 2: (y - 2) * 0.25.
// RUN: python -c "import numpy as np; np.save('%t.xf.npy', np.array([[0, -1.5, 1], [49.5, 63, -64.5]], dtype=np.float32))"
// RUN: dg-run %s --float -i %t.xf.npy -o %t.yf.npy
// RUN: python -c "import numpy as np; y = np.load('%t.yf.npy'); print(y.dtype, y.tolist())" | filecheck %s --check-prefix=FLOAT
// FLOAT: float32 {{\[}}[1.5, -1.0], [-3.0, -29.75]]
// RUN: python -c "import numpy as np; np.save('%t.x64.npy', np.zeros((1, 3)))"
// RUN: not dg-run %s --float -i %t.x64.npy 2>&1 | filecheck %s --check-prefix=FLOAT64
// FLOAT64: dg-run: error: --float: input '{{.*}}x64.npy' is float64; the device's host quantization takes float32 (save it with x.astype(np.float32))
// RUN: not dg-run %s -i %t.xf.npy 2>&1 | filecheck %s --check-prefix=NOFLOAT
// NOFLOAT: dg-run: error: argument #0 of @main (tensor<?x3xi8>): expected int8 elements, got float32 (float inputs: --float quantizes them with the module's dghw.scale)

// A module of another stage: which one, and the command that lowers it.
// RUN: sed 's/dghw.add/dgq.add/' %s > %t.model.dgq.mlir
// RUN: not dg-run %t.model.dgq.mlir -i %t.x.npy 2>&1 | filecheck %s --check-prefix=STAGE
// STAGE:      {{.*}}model.dgq.mlir:{{[0-9]+}}:{{[0-9]+}}: error: Operation dgq.add is not registered: '{{.*}}model.dgq.mlir' is a dgq module and dg runs dghw modules; lower it to dghw first: dg-opt {{.*}}model.dgq.mlir -p dg-pipeline -o {{.*}}model.dghw.mlir
// STAGE-NEXT: {{^}}    %s = dgq.add %a, %b

// Bad input: one diagnostic line, exit status 1.
// RUN: not dg-run %s -i %t.wide.npy 2>&1 | filecheck %s --check-prefix=DTYPE
// DTYPE: dg-run: error: argument #0 of @main (tensor<?x3xi8>): expected int8 elements, got int32
// RUN: not dg-run %s 2>&1 | filecheck %s --check-prefix=COUNT
// COUNT: dg-run: error: @main takes 1 argument(s), got 0
// RUN: not dg-run %s -i %t.x.npy -o %t.a.npy -o %t.b.npy 2>&1 | filecheck %s --check-prefix=OUTPUTS
// OUTPUTS: dg-run: error: @main has 1 result(s), got 2 --output file(s)
// RUN: not dg-run %s -i %t.missing.npy 2>&1 | filecheck %s --check-prefix=NOINPUT
// NOINPUT: dg-run: error: cannot read input '{{.*}}missing.npy': No such file or directory
// RUN: not dg-run %s -i %s 2>&1 | filecheck %s --check-prefix=NOTNPY
// NOTNPY: dg-run: error: input '{{.*}}dg-run.mlir' is not a .npy file (no NumPy header)
// RUN: not dg-run %t.missing.mlir 2>&1 | filecheck %s --check-prefix=NOFILE
// NOFILE: dg-run: error: cannot read '{{.*}}missing.mlir': No such file or directory
// RUN: not dg-run %s -i %t.x.npy --function forward 2>&1 | filecheck %s --check-prefix=NOFUNC
// NOFUNC: dg-run: error: the module has no function @forward
// RUN: sed 's/shift = array<i32: 31>/shift = array<i32: 1>/' %s > %t.unverified.mlir
// RUN: not dg-run %t.unverified.mlir -i %t.x.npy 2>&1 | filecheck %s --check-prefix=VERIFY
// VERIFY:      {{.*}}unverified.mlir:{{[0-9]+}}:10: error: 'dghw.rescale' op shifts must lie in [2, 62] (TOSA SINGLE_ROUND)
// VERIFY-NEXT: {{^}}    %y = dghw.rescale %acc
// VERIFY-NEXT: {{^}}         ^^^^^^^^^^^^{{$}}
// RUN: sed 's/dghw.add/dghw.sum/' %s > %t.unparsed.mlir
// RUN: not dg-run %t.unparsed.mlir -i %t.x.npy 2>&1 | filecheck %s --check-prefix=PARSE
// PARSE:      {{.*}}unparsed.mlir:{{[0-9]+}}:{{[0-9]+}}: error: Operation dghw.sum is not registered
// PARSE-NEXT: {{^}}    %s = dghw.sum %a, %b

builtin.module {
  func.func @main(%x: tensor<?x3xi8> {dghw.scale = 5.000000e-01 : f64, dghw.zero_point = 1 : i32}) -> (tensor<?x2xi8> {dghw.scale = 2.500000e-01 : f64, dghw.zero_point = 2 : i32}) attributes {dg.output_structure = "single"} {
    %w = dghw.constant {value = dense<[[1, 2, 3], [-1, 0, 1]]> : tensor<2x3xi8>} : tensor<2x3xi8>
    %b = dghw.constant {value = dense<[11, -10]> : tensor<2xi32>} : tensor<2xi32>
    %acc = dghw.fully_connected %x, %w, %b {input_zp = 1 : i32, weight_zp = 0 : i32} : (tensor<?x3xi8>, tensor<2x3xi8>, tensor<2xi32>) -> tensor<?x2xi32>
    %y = dghw.rescale %acc {multiplier = array<i32: 1073741824>, shift = array<i32: 31>, input_zp = 0 : i32, output_zp = 2 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x2xi32> -> tensor<?x2xi8>
    func.return %y : tensor<?x2xi8>
  }
  func.func @twice(%a: tensor<?x3xi32>, %b: tensor<?x3xi32>) -> tensor<?x3xi32> {
    %s = dghw.add %a, %b : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>
    func.return %s : tensor<?x3xi32>
  }
}
