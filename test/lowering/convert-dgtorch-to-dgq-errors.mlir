// What convert-dgtorch-to-dgq cannot convert fails the pass, naming the op, its location and why.
// RUN: dg-opt %s --split-input-file --verify-diagnostics -p convert-dgtorch-to-dgq | filecheck %s
// RUN: not dg-opt %s -p convert-dgtorch-to-dgq 2>&1 | filecheck %s --check-prefix=CLI

// The command line fails without a traceback, with the first case's message.
// CLI:      relu.py:3:0: error: pass 'convert-dgtorch-to-dgq' failed: 'dgtorch.relu': standalone relu is not supported
// CLI-NEXT: shared.py:2:0: error: 'dgtorch.conv2d'
// CLI-NOT:  Traceback

// A relu that is not the tail of a conv2d, linear or add.
// CHECK-LABEL: relu.py:3:0: error: 'dgtorch.relu': standalone relu is not supported: relu is only supported as the fusion tail of a conv2d, linear or add whose result it alone uses
// CHECK:       "dgtorch.relu"
// CHECK-NEXT:  ^^^
// CHECK-NEXT:  | standalone relu is not supported
func.func @standalone_relu(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  %r = dgtorch.relu %xd : tensor<?x4xf32> -> tensor<?x4xf32> loc("relu.py":3:0)
  %rq = dgtorch.quantize_per_tensor %r {scale = 0.5 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x4xi8>
  %rd = dgtorch.dequantize_per_tensor %rq {scale = 0.5 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  func.return %rd : tensor<?x4xf32>
}

// -----

// A relu after a conv whose result has another use cannot be fused either.
// CHECK-LABEL: shared.py:2:0: error: 'dgtorch.conv2d': no dgq equivalent
// CHECK-NEXT:  shared.py:3:0: error: 'dgtorch.relu': cannot fuse into the 'dgtorch.conv2d' before it, which could not be converted (see its error)
func.func @relu_of_shared_conv(%x: tensor<?x1x2x2xf32>) -> (tensor<?x1x2x2xf32>, tensor<?x1x2x2xf32>) {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x2xf32> -> tensor<?x1x2x2xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x2xi8> -> tensor<?x1x2x2xf32>
  %w = dgtorch.constant {value = dense<64> : tensor<1x1x1x1xi8>} : tensor<1x1x1x1xi8>
  %wd = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.25>, zero_points = array<i64: 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<1x1x1x1xi8> -> tensor<1x1x1x1xf32>
  %c = dgtorch.conv2d %xd, %wd {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x1x2x2xf32>, tensor<1x1x1x1xf32>) -> tensor<?x1x2x2xf32> loc("shared.py":2:0)
  %r = dgtorch.relu %c : tensor<?x1x2x2xf32> -> tensor<?x1x2x2xf32> loc("shared.py":3:0)
  %rq = dgtorch.quantize_per_tensor %r {scale = 0.5 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x2xf32> -> tensor<?x1x2x2xi8>
  %rd = dgtorch.dequantize_per_tensor %rq {scale = 0.5 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x2xi8> -> tensor<?x1x2x2xf32>
  func.return %rd, %c : tensor<?x1x2x2xf32>, tensor<?x1x2x2xf32>
}

// -----

// Dilated convolution is not supported (and its relu tail then cannot fuse).
// CHECK-LABEL: dilated.py:5:0: error: 'dgtorch.conv2d': dilation [2, 2] is not supported: dilation must be 1
// CHECK-NEXT:  dilated.py:6:0: error: 'dgtorch.relu': cannot fuse into the 'dgtorch.conv2d' before it
func.func @dilated_conv2d(%x: tensor<?x1x5x5xf32>) -> tensor<?x1x1x1xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x5x5xf32> -> tensor<?x1x5x5xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x5x5xi8> -> tensor<?x1x5x5xf32>
  %w = dgtorch.constant {value = dense<1> : tensor<1x1x3x3xi8>} : tensor<1x1x3x3xi8>
  %wd = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.25>, zero_points = array<i64: 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<1x1x3x3xi8> -> tensor<1x1x3x3xf32>
  %c = dgtorch.conv2d %xd, %wd {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 2, 2>, groups = 1 : i64} : (tensor<?x1x5x5xf32>, tensor<1x1x3x3xf32>) -> tensor<?x1x1x1xf32> loc("dilated.py":5:0)
  %r = dgtorch.relu %c : tensor<?x1x1x1xf32> -> tensor<?x1x1x1xf32> loc("dilated.py":6:0)
  %rq = dgtorch.quantize_per_tensor %r {scale = 0.5 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x1x1xf32> -> tensor<?x1x1x1xi8>
  %rd = dgtorch.dequantize_per_tensor %rq {scale = 0.5 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x1x1xi8> -> tensor<?x1x1x1xf32>
  func.return %rd : tensor<?x1x1x1xf32>
}

// -----

// Grouped convolution is not supported yet.
// CHECK-LABEL: grouped.py:4:0: error: 'dgtorch.conv2d': groups = 2 is not supported: only dense convolution (groups = 1) is
func.func @grouped_conv2d(%x: tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x2x2xf32> -> tensor<?x2x2x2xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x2x2xi8> -> tensor<?x2x2x2xf32>
  %w = dgtorch.constant {value = dense<1> : tensor<2x1x1x1xi8>} : tensor<2x1x1x1xi8>
  %wd = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.25, 0.25>, zero_points = array<i64: 0, 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<2x1x1x1xi8> -> tensor<2x1x1x1xf32>
  %c = dgtorch.conv2d %xd, %wd {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 2 : i64} : (tensor<?x2x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<?x2x2x2xf32> loc("grouped.py":4:0)
  %cq = dgtorch.quantize_per_tensor %c {scale = 0.5 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x2x2xf32> -> tensor<?x2x2x2xi8>
  %cd = dgtorch.dequantize_per_tensor %cq {scale = 0.5 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x2x2xi8> -> tensor<?x2x2x2xf32>
  func.return %cd : tensor<?x2x2x2xf32>
}

// -----

// Ops outside any quantized partition: a linear on a float input with float weights.
// CHECK-LABEL: float.py:8:0: error: 'dgtorch.constant': a constant must be an integer tensor that a dequantize consumes (a quantized parameter, as convert_pt2e folds them)
// CHECK-NEXT:  float.py:9:0: error: 'dgtorch.linear': no dgq equivalent: expected every float operand to be a dequantized value and the result to be quantized once (a torchao partition)
func.func @unquantized_linear(%x: tensor<?x2xf32>) -> tensor<?x1xf32> {
  %w = dgtorch.constant {value = dense<[[0.5, 0.25]]> : tensor<1x2xf32>} : tensor<1x2xf32> loc("float.py":8:0)
  %y = dgtorch.linear %x, %w : (tensor<?x2xf32>, tensor<1x2xf32>) -> tensor<?x1xf32> loc("float.py":9:0)
  func.return %y : tensor<?x1xf32>
}

// -----

// A dequantize whose parameters are not those its input was quantized with.
// CHECK-LABEL: mismatch.py:2:0: error: 'dgtorch.dequantize_per_tensor': its parameters differ from those its input is quantized with, or its input is not a quantized value
func.func @mismatched_dequantize(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.25 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32> loc("mismatch.py":2:0)
  func.return %xd : tensor<?x4xf32>
}

// -----

// An unsigned range in an i8 tensor does not fit the storage type.
// CHECK-LABEL: uint8.py:1:0: error: 'dgtorch.quantize_per_tensor': quantization range [0, 255] does not fit its integer type
func.func @range_exceeds_storage(%x: tensor<?x4xf32>) -> tensor<?x4xi8> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 128 : i64, quant_min = 0 : i64, quant_max = 255 : i64} : tensor<?x4xf32> -> tensor<?x4xi8> loc("uint8.py":1:0)
  func.return %xq : tensor<?x4xi8>
}
