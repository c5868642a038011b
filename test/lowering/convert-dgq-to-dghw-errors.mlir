// What convert-dgq-to-dghw cannot lower fails the pass, naming the op, its location and why.
// RUN: dg-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect -p convert-dgq-to-dghw | filecheck %s

// Quantize and dequantize exist on the device only at the graph boundary.
// CHECK-LABEL: mid.py:3:0: error: 'dgq.dequantize': only graph outputs can be dequantized: its result must feed func.return only
// CHECK-NEXT:  mid.py:4:0: error: 'dgq.quantize': only graph inputs can be quantized: this quantizes an intermediate float value, which the device never holds
// CHECK-NEXT:  mid.py:5:0: error: 'dgq.dequantize': operand #0 comes from dgq.quantize, which was not lowered
func.func @intermediate_float(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %xq = dgq.quantize %x : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>> loc("mid.py":2:0)
  %xd = dgq.dequantize %xq : tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x4xf32> loc("mid.py":3:0)
  %yq = dgq.quantize %xd : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8:f32, 0.25:3>> loc("mid.py":4:0)
  %yd = dgq.dequantize %yq : tensor<?x4x!dgq.uniform<i8:f32, 0.25:3>> -> tensor<?x4xf32> loc("mid.py":5:0)
  func.return %yd : tensor<?x4xf32>
}

// -----

// Once every op is lowered, a float left in the signature is reported on the function.
// CHECK-LABEL: float_arg.py:1:0: error: 'func.func': signature (tensor<?x4xi8>, tensor<?x4xf32>) -> (tensor<?x4xi8>, tensor<?x4xf32>) is not integer-only: every argument must enter through one dgq.quantize and every result leave through dgq.dequantize
func.func @float_argument(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %xq = dgq.quantize %x : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>
  %xd = dgq.dequantize %xq : tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x4xf32>
  func.return %xd, %y : tensor<?x4xf32>, tensor<?x4xf32>
} loc("float_arg.py":1:0)

// -----

// A graph input must be quantized once, to the whole storage range.
// CHECK-LABEL: twice.py:2:0: error: 'dgq.quantize': a graph input must feed exactly one dgq.quantize
// CHECK:       narrow.py:4:0: error: 'dgq.quantize': graph inputs must be quantized to the whole range of their storage type (the host clamps to it)
func.func @graph_input_quantization(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %a = dgq.quantize %x : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>> loc("twice.py":2:0)
  %b = dgq.quantize %x : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>> loc("twice.py":3:0)
  %c = dgq.quantize %y : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8<-127:127>:f32, 0.5>> loc("narrow.py":4:0)
  %ad = dgq.dequantize %a : tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x4xf32>
  %bd = dgq.dequantize %b : tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x4xf32>
  %cd = dgq.dequantize %c : tensor<?x4x!dgq.uniform<i8<-127:127>:f32, 0.5>> -> tensor<?x4xf32>
  func.return %ad, %bd, %cd : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// Weights must be compile-time constants.
// CHECK-LABEL: weights.py:7:0: error: 'dgq.linear': weight and bias must be dgq.constant values
func.func @activation_weight(%x: tensor<?x3xf32>, %w: tensor<2x3xf32>) -> tensor<?x2xf32> {
  %xq = dgq.quantize %x : tensor<?x3xf32> -> tensor<?x3x!dgq.uniform<i8:f32, 0.5:3>>
  %wq = dgq.quantize %w : tensor<2x3xf32> -> tensor<2x3x!dgq.uniform<i8:f32, 0.25>>
  %yq = dgq.linear %xq, %wq : (tensor<?x3x!dgq.uniform<i8:f32, 0.5:3>>, tensor<2x3x!dgq.uniform<i8:f32, 0.25>>) -> tensor<?x2x!dgq.uniform<i8:f32, 0.25:-1>> loc("weights.py":7:0)
  %yd = dgq.dequantize %yq : tensor<?x2x!dgq.uniform<i8:f32, 0.25:-1>> -> tensor<?x2xf32>
  func.return %yd : tensor<?x2xf32>
}

// -----

// An op without a dghw lowering; the dgq value it consumes is reported through it.
// CHECK-LABEL: unknown.py:3:0: error: 'test.op': has no dghw lowering
// CHECK-NOT:   builtin.unrealized_conversion_cast':
func.func @unknown_op(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %xq = dgq.quantize %x : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>
  %t = "test.op"(%xq) : (tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>) -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>> loc("unknown.py":3:0)
  %td = dgq.dequantize %t : tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x4xf32>
  func.return %td : tensor<?x4xf32>
}

// -----

// A grid change too large for dghw.rescale (factor 0.5 / 2^-30 = 2^29).
// CHECK-LABEL: huge.py:8:0: error: 'dgq.requantize': rescale factor 536870912.0 is too large: dghw.rescale encodes factors up to (2^31 - 1) * 2^-2 only
func.func @rescale_factor_too_large(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %xq = dgq.quantize %x : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>
  %yq = dgq.requantize %xq : tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x4x!dgq.uniform<i8:f32, 9.313225746154785e-10>> loc("huge.py":8:0)
  %yd = dgq.dequantize %yq : tensor<?x4x!dgq.uniform<i8:f32, 9.313225746154785e-10>> -> tensor<?x4xf32>
  func.return %yd : tensor<?x4xf32>
}

// -----

// A dgq.pad that cannot fold: before a max pool, before nothing that takes padding, and before an
// avg pool whose divisor rule would have to differ between the two paddings. The ops it feeds are
// reported through it.
// CHECK-LABEL: pad.py:2:0: error: 'dgq.pad': max_pool2d does not support padding, also not through a preceding F.pad: remove the F.pad
// CHECK-NEXT:  pad.py:3:0: error: 'dgq.max_pool2d': operand #0 comes from dgq.pad, which was not lowered
// CHECK-NEXT:  pad.py:4:0: error: 'dgq.pad': standalone pad is not supported: F.pad is only supported as the immediate prefix of a Conv2d or AvgPool2d, into whose padding it folds
// CHECK-NEXT:  pad.py:5:0: error: 'dgq.pad': cannot fold into the 'dgq.avg_pool2d' at pad.py:6:0 (see its error)
// CHECK-NEXT:  pad.py:6:0: error: 'dgq.avg_pool2d': cannot absorb the F.pad before it at pad.py:5:0: with count_include_pad=False the pool excludes its own padding from the divisor, but PyTorch counts the F.pad zeros, and one pool cannot do both; use count_include_pad=True, or put all the padding in one of the two places
func.func @unfolded_pads(%x: tensor<?x1x4x4xf32>) -> (tensor<?x1x3x3xf32>, tensor<?x1x6x6xf32>, tensor<?x1x3x3xf32>) {
  %xq = dgq.quantize %x : tensor<?x1x4x4xf32> -> tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:3>>
  %p = dgq.pad %xq {pad = array<i64: 1, 1, 1, 1>} : tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x1x6x6x!dgq.uniform<i8:f32, 0.5:3>> loc("pad.py":2:0)
  %m = dgq.max_pool2d %p {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>} : tensor<?x1x6x6x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x1x3x3x!dgq.uniform<i8:f32, 0.5:3>> loc("pad.py":3:0)
  %q = dgq.pad %xq {pad = array<i64: 1, 1, 1, 1>} : tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x1x6x6x!dgq.uniform<i8:f32, 0.5:3>> loc("pad.py":4:0)
  %r = dgq.pad %xq {pad = array<i64: 1, 1, 1, 1>} : tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x1x6x6x!dgq.uniform<i8:f32, 0.5:3>> loc("pad.py":5:0)
  %a = dgq.avg_pool2d %r {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, count_include_pad = false} : tensor<?x1x6x6x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x1x3x3x!dgq.uniform<i8:f32, 0.5:3>> loc("pad.py":6:0)
  %md = dgq.dequantize %m : tensor<?x1x3x3x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x1x3x3xf32>
  %qd = dgq.dequantize %q : tensor<?x1x6x6x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x1x6x6xf32>
  %ad = dgq.dequantize %a : tensor<?x1x3x3x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x1x3x3xf32>
  func.return %md, %qd, %ad : tensor<?x1x3x3xf32>, tensor<?x1x6x6xf32>, tensor<?x1x3x3xf32>
}

// -----

// Sigmoid and softmax read 256-entry tables, indexed by an i8 input.
// CHECK-LABEL: wide.py:3:0: error: 'dgq.sigmoid': its input must be an i8 tensor: the device computes it through 256-entry tables
func.func @sigmoid_of_i16(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %xq = dgq.quantize %x : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i16:f32, 0.5>>
  %s = dgq.sigmoid %xq : tensor<?x4x!dgq.uniform<i16:f32, 0.5>> -> tensor<?x4x!dgq.uniform<i8:f32, 0.00390625:-128>> loc("wide.py":3:0)
  %sd = dgq.dequantize %s : tensor<?x4x!dgq.uniform<i8:f32, 0.00390625:-128>> -> tensor<?x4xf32>
  func.return %sd : tensor<?x4xf32>
}

// -----

// dgq.mul_constant needs a dgq.constant operand: the device multiplies by stored i8 integers.
// CHECK-LABEL: mulc.py:5:0: error: 'dgq.mul_constant': input and constant must be i8 and the constant a dgq.constant
func.func @mul_constant_of_activation(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %xq = dgq.quantize %x : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>
  %c = "test.op"() : () -> tensor<4x!dgq.uniform<i8:f32, 0.125>>
  %mq = dgq.mul_constant %xq, %c : (tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>, tensor<4x!dgq.uniform<i8:f32, 0.125>>) -> tensor<?x4x!dgq.uniform<i8:f32, 0.25:-1>> loc("mulc.py":5:0)
  %md = dgq.dequantize %mq : tensor<?x4x!dgq.uniform<i8:f32, 0.25:-1>> -> tensor<?x4xf32>
  func.return %md : tensor<?x4xf32>
}

// -----

// LowerNorm: an eps that the device's variance sum D = V * 2^20 + eps cannot hold.
// CHECK-LABEL: norm.py:5:0: error: 'dgq.norm': eps 100000000.0 is 1e+14 squared input steps, more than the device's variance sum holds for a row of 4 (1.37e+11); use a smaller eps
func.func @norm_huge_eps(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %xq = dgq.quantize %x : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8:f32, 0.001:3>>
  %n = dgq.norm %xq {kind = "layer", eps = 1.0e+08 : f64, gamma = array<f64: 1.0, 1.0, 1.0, 1.0>, beta = array<f64: 0.0, 0.0, 0.0, 0.0>} : tensor<?x4x!dgq.uniform<i8:f32, 0.001:3>> -> tensor<?x4x!dgq.uniform<i8:f32, 0.03125:-2>> loc("norm.py":5:0)
  %nd = dgq.dequantize %n : tensor<?x4x!dgq.uniform<i8:f32, 0.03125:-2>> -> tensor<?x4xf32>
  func.return %nd : tensor<?x4xf32>
}

// -----

// LowerNorm: a weight no 22-bit multiplier (NORM_MULTIPLIER_LIMIT) with shift >= 2 holds.
// CHECK-LABEL: norm.py:6:0: error: 'dgq.norm': weight (up to 3.2e+31 output steps) or bias (up to 0 output steps) is too large for the norm's 22-bit multiplier and 61-bit bias; a norm whose outputs are this far outside the output grid saturates: check the weight and bias
func.func @norm_huge_weight(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %xq = dgq.quantize %x : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>
  %n = dgq.norm %xq {kind = "layer", eps = 1.0e-05 : f64, gamma = array<f64: 1.0, 1.0e+30, 1.0, 1.0>, beta = array<f64: 0.0, 0.0, 0.0, 0.0>} : tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x4x!dgq.uniform<i8:f32, 0.03125:-2>> loc("norm.py":6:0)
  %nd = dgq.dequantize %n : tensor<?x4x!dgq.uniform<i8:f32, 0.03125:-2>> -> tensor<?x4xf32>
  func.return %nd : tensor<?x4xf32>
}

// -----

// LowerNorm: a weight that fits the multiplier but spreads the normalized values over more
// output steps than the device's rsqrt keeps within one step (docs/dghw.md, precision).
// CHECK-LABEL: norm.py:7:0: error: 'dgq.norm': weight up to 1.28e+06 output steps spreads the normalized values (up to sqrt(4) = 2) over 2.56e+06 output steps, more than the 65536 for which the device's fixed-point rsqrt stays within one step of the float norm; the output grid is far finer than this norm's outputs: calibrate on data that exercises the norm, or scale its weight down
func.func @norm_imprecise_weight(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %xq = dgq.quantize %x : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>
  %n = dgq.norm %xq {kind = "layer", eps = 1.0e-05 : f64, gamma = array<f64: 1.0, 4.0e+04, 1.0, 1.0>, beta = array<f64: 0.0, 0.0, 0.0, 0.0>} : tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x4x!dgq.uniform<i8:f32, 0.03125:-2>> loc("norm.py":7:0)
  %nd = dgq.dequantize %n : tensor<?x4x!dgq.uniform<i8:f32, 0.03125:-2>> -> tensor<?x4xf32>
  func.return %nd : tensor<?x4xf32>
}

// -----

// A dgq.pad whose zeros hold the last ceil-mode window of an avg_pool2d: the fold would drop it.
// CHECK-LABEL: pad.py:13:0: error: 'dgq.pad': cannot fold into the 'dgq.avg_pool2d' at pool.py:14:0 (see its error)
// CHECK-NEXT:  pool.py:14:0: error: 'dgq.avg_pool2d': cannot absorb the F.pad before it at pad.py:13:0: in ceil mode the pool's last window starts in the F.pad zeros, which become trailing padding in the fold, where torch's ceil rule has no window; use ceil_mode=False
func.func @pad_avg_pool2d_ceil_window(%x: tensor<?x1x4x4xf32>) -> tensor<?x1x3x3xf32> {
  %xq = dgq.quantize %x : tensor<?x1x4x4xf32> -> tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:3>>
  %p = dgq.pad %xq {pad = array<i64: 2, 0, 0, 1>} : tensor<?x1x4x4x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x1x6x5x!dgq.uniform<i8:f32, 0.5:3>> loc("pad.py":13:0)
  %a = dgq.avg_pool2d %p {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, count_include_pad = false} : tensor<?x1x6x5x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x1x3x3x!dgq.uniform<i8:f32, 0.5:3>> loc("pool.py":14:0)
  %ad = dgq.dequantize %a : tensor<?x1x3x3x!dgq.uniform<i8:f32, 0.5:3>> -> tensor<?x1x3x3xf32>
  func.return %ad : tensor<?x1x3x3xf32>
}

// -----

// Softmax reads its exp table by an i8 input too.
// CHECK-LABEL: wide.py:4:0: error: 'dgq.softmax': its input must be an i8 tensor: the device computes it through 256-entry tables
func.func @softmax_of_i16(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %xq = dgq.quantize %x : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i16:f32, 0.5>>
  %s = dgq.softmax %xq {axis = 1 : i64} : tensor<?x4x!dgq.uniform<i16:f32, 0.5>> -> tensor<?x4x!dgq.uniform<i8:f32, 0.00390625:-128>> loc("wide.py":4:0)
  %sd = dgq.dequantize %s : tensor<?x4x!dgq.uniform<i8:f32, 0.00390625:-128>> -> tensor<?x4xf32>
  func.return %sd : tensor<?x4xf32>
}

// -----

// A quantized value returned as it is: the legal func.return cannot take a dgq value.
// CHECK-LABEL: escape.py:2:0: error: 'builtin.unrealized_conversion_cast': a quantized dgq value reaches 'func.return', which cannot take it
func.func @quantized_result(%x: tensor<?x4xf32>) -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>> {
  %xq = dgq.quantize %x : tensor<?x4xf32> -> tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>> loc("escape.py":2:0)
  func.return %xq : tensor<?x4x!dgq.uniform<i8:f32, 0.5:3>>
}
