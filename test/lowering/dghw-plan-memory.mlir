// dghw-plan-memory: one case per planning rule, each checked by dghw-verify-memory-plan too.
// Sizes are per batch item, rounded up to 16 bytes; offsets are bytes in the arena.
// RUN: dg-opt %s --split-input-file -p dghw-plan-memory | filecheck %s
// RUN: dg-opt %s --split-input-file -p dghw-plan-memory,dghw-verify-memory-plan | filecheck %s
// The budget option fails the pass at the op where the arena peaks, naming what lives there:
// RUN: not dg-opt %s --split-input-file -p 'dghw-plan-memory{sram-bytes=319}' 2>&1 | filecheck %s --check-prefix=BUDGET
// BUDGET: model.py:3:0: error: pass 'dghw-plan-memory' failed: 'dghw.rescale': the activation arena peaks here at 320 bytes per batch item, over the SRAM budget of 319 bytes by 1; the largest tensors live here: dghw.rescale at model.py:3 (stem): 256 B at +0; argument #0: 64 B at +256 Fix: make the input smaller, give this layer fewer channels (or split it), or give the target more SRAM (Target.sram_bytes)
// A budget equal to the largest case's peak passes them all:
// RUN: dg-opt %s --split-input-file -p 'dghw-plan-memory{sram-bytes=576}' | filecheck %s

// Lifetimes run from the defining op to the last use: the i32 accumulator and the argument
// are live together (the lower bound, 256 + 64); the narrowing rescale writes over the
// accumulator, which dies there, and the table over it in turn: one 256-byte slot.
// CHECK-LABEL: func.func @main(%x: tensor<?x64xi8> {dghw.offset = 256 : i64}) -> tensor<?x64xi8>
// CHECK-SAME:    attributes {dghw.memory_plan = {arena_bytes = 320 : i64, lower_bound_bytes = 320 : i64, constant_bytes = 0 : i64}}
// CHECK-NEXT:    %wide = dghw.rescale %x {dghw.offset = 0 : i64,
// CHECK-NEXT:    %narrow = dghw.rescale %wide {dghw.offset = 0 : i64,
// CHECK-NEXT:    %t = dghw.table %narrow {dghw.offset = 0 : i64,
func.func @main(%x: tensor<?x64xi8>) -> tensor<?x64xi8> {
  %wide = dghw.rescale %x {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -2147483648 : i32, clamp_max = 2147483647 : i32} : tensor<?x64xi8> -> tensor<?x64xi32> loc("stem"("model.py":3:0))
  %narrow = dghw.rescale %wide {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x64xi32> -> tensor<?x64xi8>
  %t = dghw.table %narrow {table = array<i8: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, -128, -127, -126, -125, -124, -123, -122, -121, -120, -119, -118, -117, -116, -115, -114, -113, -112, -111, -110, -109, -108, -107, -106, -105, -104, -103, -102, -101, -100, -99, -98, -97, -96, -95, -94, -93, -92, -91, -90, -89, -88, -87, -86, -85, -84, -83, -82, -81, -80, -79, -78, -77, -76, -75, -74, -73, -72, -71, -70, -69, -68, -67, -66, -65, -64, -63, -62, -61, -60, -59, -58, -57, -56, -55, -54, -53, -52, -51, -50, -49, -48, -47, -46, -45, -44, -43, -42, -41, -40, -39, -38, -37, -36, -35, -34, -33, -32, -31, -30, -29, -28, -27, -26, -25, -24, -23, -22, -21, -20, -19, -18, -17, -16, -15, -14, -13, -12, -11, -10, -9, -8, -7, -6, -5, -4, -3, -2, -1>} : tensor<?x64xi8> -> tensor<?x64xi8>
  func.return %t : tensor<?x64xi8>
}

// -----

// A reshape moves no bytes: its result is its operand, at the same offset. A transpose
// moves them: its result needs bytes of its own while its operand is read.
// CHECK-LABEL: func.func @main(%x: tensor<?x4x16xi8> {dghw.offset = 0 : i64}) -> tensor<?x16x4xi8>
// CHECK-SAME:    arena_bytes = 128 : i64, lower_bound_bytes = 128 : i64
// CHECK-NEXT:    %flat = dghw.reshape %x {dghw.offset = 0 : i64}
// CHECK-NEXT:    %back = dghw.reshape %flat {dghw.offset = 0 : i64}
// CHECK-NEXT:    %moved = dghw.transpose %back {dghw.offset = 64 : i64,
func.func @main(%x: tensor<?x4x16xi8>) -> tensor<?x16x4xi8> {
  %flat = dghw.reshape %x : tensor<?x4x16xi8> -> tensor<?x64xi8>
  %back = dghw.reshape %flat : tensor<?x64xi8> -> tensor<?x4x16xi8>
  %moved = dghw.transpose %back {perm = array<i64: 0, 2, 1>} : tensor<?x4x16xi8> -> tensor<?x16x4xi8>
  func.return %moved : tensor<?x16x4xi8>
}

// -----

// An elementwise op writes over an operand only at its last use: %x is read again by the
// bitwise op, so the shift's result needs a slot of its own; the bitwise op then writes
// over the shift's result (its last use) and not over %x, though %x dies there too: an op
// writes over one operand at most.
// CHECK-LABEL: func.func @main(%x: tensor<?x16xi32> {dghw.offset = 0 : i64}) -> tensor<?x16xi32>
// CHECK-SAME:    arena_bytes = 128 : i64, lower_bound_bytes = 128 : i64
// CHECK-NEXT:    %s = dghw.shift %x {dghw.offset = [[S:[0-9]+]] : i64,
// CHECK-NEXT:    %b = dghw.bitwise_tensor %s, %x {dghw.offset = [[S]] : i64,
func.func @main(%x: tensor<?x16xi32>) -> tensor<?x16xi32> {
  %s = dghw.shift %x {direction = "left", shift = 1 : i64} : tensor<?x16xi32> -> tensor<?x16xi32>
  %b = dghw.bitwise_tensor %s, %x {kind = "and"} : (tensor<?x16xi32>, tensor<?x16xi32>) -> tensor<?x16xi32>
  func.return %b : tensor<?x16xi32>
}

// -----

// A widening elementwise op (i8 x i8 -> i32) never writes in place: its elements would
// land on operand bytes not yet read.
// CHECK-LABEL: func.func @main(%x: tensor<?x16xi8> {dghw.offset = 64 : i64}) -> tensor<?x16xi32>
// CHECK-SAME:    arena_bytes = 80 : i64, lower_bound_bytes = 80 : i64, constant_bytes = 16 : i64
// CHECK-NEXT:    %c = dghw.constant {dghw.offset = 0 : i64, value = dense<3> : tensor<1x16xi8>}
// CHECK-NEXT:    %m = dghw.mul %x, %c {dghw.offset = 0 : i64,
func.func @main(%x: tensor<?x16xi8>) -> tensor<?x16xi32> {
  %c = dghw.constant {value = dense<3> : tensor<1x16xi8>} : tensor<1x16xi8>
  %m = dghw.mul %x, %c {input_zp = 0 : i32, constant_zp = 0 : i32} : (tensor<?x16xi8>, tensor<1x16xi8>) -> tensor<?x16xi32>
  func.return %m : tensor<?x16xi32>
}

// -----

// Constants go to their own read-only region, one after another, each rounded up to 16
// bytes: 40 bytes of bias take 48. They never count in the arena.
// CHECK-LABEL: func.func @main(%x: tensor<?x2x2x4xi8> {dghw.offset = 160 : i64}) -> tensor<?x2x2x10xi32>
// CHECK-SAME:    arena_bytes = 176 : i64, lower_bound_bytes = 176 : i64, constant_bytes = 96 : i64
// CHECK-NEXT:    %w = dghw.constant {dghw.offset = 0 : i64,
// CHECK-NEXT:    %b = dghw.constant {dghw.offset = 48 : i64,
// CHECK-NEXT:    %c = dghw.conv2d %x, %w, %b {dghw.offset = 0 : i64,
func.func @main(%x: tensor<?x2x2x4xi8>) -> tensor<?x2x2x10xi32> {
  %w = dghw.constant {value = dense<1> : tensor<10x1x1x4xi8>} : tensor<10x1x1x4xi8>
  %b = dghw.constant {value = dense<0> : tensor<10xi32>} : tensor<10xi32>
  %c = dghw.conv2d %x, %w, %b {stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x2x2x4xi8>, tensor<10x1x1x4xi8>, tensor<10xi32>) -> tensor<?x2x2x10xi32>
  func.return %c : tensor<?x2x2x10xi32>
}

// -----

// A narrowing write undone: the int8 residual stream (%s1, %s2, %s3) written over its int32
// sum pins a small tensor that lives a whole block to the low end of a large one that
// lives two steps, and with every such write kept in place no greedy order meets the lower
// bound (640 bytes for 576). Where the sum and the stream side by side still fit the bound
// at the rescale, the planner gives the stream a slot of its own: the arena meets it.
// CHECK-LABEL: func.func @main(%s0: tensor<?x64xi8> {dghw.offset = {{[0-9]+}} : i64}) -> tensor<?x64xi8>
// CHECK-SAME:    arena_bytes = 576 : i64, lower_bound_bytes = 576 : i64
// CHECK:         %c0 = dghw.add %a0, %b0 {dghw.offset = 0 : i64}
// CHECK-NEXT:    %s1 = dghw.rescale %c0 {dghw.offset = 256 : i64,
// CHECK:         %c1 = dghw.add %a1, %b1 {dghw.offset = 0 : i64}
// CHECK-NEXT:    %s2 = dghw.rescale %c1 {dghw.offset = 256 : i64,
// CHECK:         %c2 = dghw.add %a2, %b2 {dghw.offset = 0 : i64}
// CHECK-NEXT:    %s3 = dghw.rescale %c2 {dghw.offset = 256 : i64,
func.func @main(%s0: tensor<?x64xi8>) -> tensor<?x64xi8> {
  %n0 = dghw.rescale %s0 {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x64xi8> -> tensor<?x64xi8>
  %w = dghw.constant {value = dense<1> : tensor<64x64xi8>} : tensor<64x64xi8>
  %bias = dghw.constant {value = dense<0> : tensor<64xi32>} : tensor<64xi32>
  %f0 = dghw.fully_connected %n0, %w, %bias {input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x64xi8>, tensor<64x64xi8>, tensor<64xi32>) -> tensor<?x64xi32>
  %g0 = dghw.rescale %f0 {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x64xi32> -> tensor<?x64xi8>
  %h0 = dghw.fully_connected %g0, %w, %bias {input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x64xi8>, tensor<64x64xi8>, tensor<64xi32>) -> tensor<?x64xi32>
  %q0 = dghw.rescale %h0 {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x64xi32> -> tensor<?x64xi8>
  %a0 = dghw.rescale %s0 {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -2147483648 : i32, clamp_max = 2147483647 : i32} : tensor<?x64xi8> -> tensor<?x64xi32>
  %b0 = dghw.rescale %q0 {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -2147483648 : i32, clamp_max = 2147483647 : i32} : tensor<?x64xi8> -> tensor<?x64xi32>
  %c0 = dghw.add %a0, %b0 : (tensor<?x64xi32>, tensor<?x64xi32>) -> tensor<?x64xi32>
  %s1 = dghw.rescale %c0 {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x64xi32> -> tensor<?x64xi8>
  %n1 = dghw.rescale %s1 {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x64xi8> -> tensor<?x64xi8>
  %f1 = dghw.fully_connected %n1, %w, %bias {input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x64xi8>, tensor<64x64xi8>, tensor<64xi32>) -> tensor<?x64xi32>
  %g1 = dghw.rescale %f1 {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x64xi32> -> tensor<?x64xi8>
  %h1 = dghw.fully_connected %g1, %w, %bias {input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x64xi8>, tensor<64x64xi8>, tensor<64xi32>) -> tensor<?x64xi32>
  %q1 = dghw.rescale %h1 {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x64xi32> -> tensor<?x64xi8>
  %a1 = dghw.rescale %s1 {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -2147483648 : i32, clamp_max = 2147483647 : i32} : tensor<?x64xi8> -> tensor<?x64xi32>
  %b1 = dghw.rescale %q1 {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -2147483648 : i32, clamp_max = 2147483647 : i32} : tensor<?x64xi8> -> tensor<?x64xi32>
  %c1 = dghw.add %a1, %b1 : (tensor<?x64xi32>, tensor<?x64xi32>) -> tensor<?x64xi32>
  %s2 = dghw.rescale %c1 {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x64xi32> -> tensor<?x64xi8>
  %n2 = dghw.rescale %s2 {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x64xi8> -> tensor<?x64xi8>
  %f2 = dghw.fully_connected %n2, %w, %bias {input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x64xi8>, tensor<64x64xi8>, tensor<64xi32>) -> tensor<?x64xi32>
  %g2 = dghw.rescale %f2 {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x64xi32> -> tensor<?x64xi8>
  %h2 = dghw.fully_connected %g2, %w, %bias {input_zp = 0 : i32, weight_zp = 0 : i32} : (tensor<?x64xi8>, tensor<64x64xi8>, tensor<64xi32>) -> tensor<?x64xi32>
  %q2 = dghw.rescale %h2 {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x64xi32> -> tensor<?x64xi8>
  %a2 = dghw.rescale %s2 {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -2147483648 : i32, clamp_max = 2147483647 : i32} : tensor<?x64xi8> -> tensor<?x64xi32>
  %b2 = dghw.rescale %q2 {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -2147483648 : i32, clamp_max = 2147483647 : i32} : tensor<?x64xi8> -> tensor<?x64xi32>
  %c2 = dghw.add %a2, %b2 : (tensor<?x64xi32>, tensor<?x64xi32>) -> tensor<?x64xi32>
  %s3 = dghw.rescale %c2 {multiplier = array<i32: 1073741824>, shift = array<i32: 30>, input_zp = 0 : i32, output_zp = 0 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32} : tensor<?x64xi32> -> tensor<?x64xi8>
  func.return %s3 : tensor<?x64xi8>
}
