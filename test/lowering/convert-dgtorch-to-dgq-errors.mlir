// What convert-dgtorch-to-dgq cannot convert fails the pass, naming the op, its location and why.
// RUN: dg-opt %s --split-input-file --verify-diagnostics -p convert-dgtorch-to-dgq | filecheck %s
// RUN: not dg-opt %s -p convert-dgtorch-to-dgq 2>&1 | filecheck %s --check-prefix=CLI

// The command line fails without a traceback, with the first case's message.
// CLI:      relu.py:3:0: error: pass 'convert-dgtorch-to-dgq' failed: 'dgtorch.relu': standalone relu is not supported
// CLI-NEXT: convert-dgtorch-to-dgq-errors.mlir:24:8: note: parsed here
// CLI-NEXT: {{^}}  %r = dgtorch.relu %xd
// CLI-NEXT: {{^}}       ^^^^^^^^^^^^{{$}}
// CLI-NEXT: relu.py:3:0: note: see current operation:
// CLI-NEXT: {{^}}%r = "dgtorch.relu"(%xd)
// Each further op the pass could not convert is one error, without the op printed.
// CLI-NEXT: shared.py:2:0: error: pass 'convert-dgtorch-to-dgq' failed: 'dgtorch.conv2d'
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

// -----

// A grouped convolution that is not depthwise (4 channels in 2 groups).
// CHECK-LABEL: grouped.py:4:0: error: 'dgtorch.conv2d': groups = 2 with 4 input and 4 output channels is not supported: only dense (groups = 1) or depthwise (groups = in_channels = out_channels) convolution is
func.func @grouped_conv2d(%x: tensor<?x4x2x2xf32>) -> tensor<?x4x2x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4x2x2xf32> -> tensor<?x4x2x2xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4x2x2xi8> -> tensor<?x4x2x2xf32>
  %w = dgtorch.constant {value = dense<1> : tensor<4x2x1x1xi8>} : tensor<4x2x1x1xi8>
  %wd = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.25, 0.25, 0.25, 0.25>, zero_points = array<i64: 0, 0, 0, 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<4x2x1x1xi8> -> tensor<4x2x1x1xf32>
  %c = dgtorch.conv2d %xd, %wd {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 2 : i64} : (tensor<?x4x2x2xf32>, tensor<4x2x1x1xf32>) -> tensor<?x4x2x2xf32> loc("grouped.py":4:0)
  %cq = dgtorch.quantize_per_tensor %c {scale = 0.5 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4x2x2xf32> -> tensor<?x4x2x2xi8>
  %cd = dgtorch.dequantize_per_tensor %cq {scale = 0.5 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4x2x2xi8> -> tensor<?x4x2x2xf32>
  func.return %cd : tensor<?x4x2x2xf32>
}

// -----

// A depth multiplier of 2 (2 channels in, 4 out, 2 groups) is not depthwise either.
// CHECK-LABEL: multiplier.py:4:0: error: 'dgtorch.conv2d': groups = 2 with 2 input and 4 output channels is not supported: only dense (groups = 1) or depthwise (groups = in_channels = out_channels) convolution is
func.func @depth_multiplier(%x: tensor<?x2x2x2xf32>) -> tensor<?x4x2x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x2x2xf32> -> tensor<?x2x2x2xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x2x2xi8> -> tensor<?x2x2x2xf32>
  %w = dgtorch.constant {value = dense<1> : tensor<4x1x1x1xi8>} : tensor<4x1x1x1xi8>
  %wd = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.25, 0.25, 0.25, 0.25>, zero_points = array<i64: 0, 0, 0, 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<4x1x1x1xi8> -> tensor<4x1x1x1xf32>
  %c = dgtorch.conv2d %xd, %wd {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 2 : i64} : (tensor<?x2x2x2xf32>, tensor<4x1x1x1xf32>) -> tensor<?x4x2x2xf32> loc("multiplier.py":4:0)
  %cq = dgtorch.quantize_per_tensor %c {scale = 0.5 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4x2x2xf32> -> tensor<?x4x2x2xi8>
  %cd = dgtorch.dequantize_per_tensor %cq {scale = 0.5 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4x2x2xi8> -> tensor<?x4x2x2xf32>
  func.return %cd : tensor<?x4x2x2xf32>
}

// -----

// max_pool2d with padding (torchvision's ResNet stem: kernel 3, stride 2, padding 1).
// CHECK-LABEL: resnet.py:20:0: error: 'dgtorch.max_pool2d': padding [1, 1] is not supported: max_pool2d does not support padding; use padding=0
func.func @max_pool2d_padding(%x: tensor<?x1x4x4xf32>) -> tensor<?x1x2x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xf32> -> tensor<?x1x4x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xi8> -> tensor<?x1x4x4xf32>
  %p = dgtorch.max_pool2d %xd {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, ceil_mode = false} : tensor<?x1x4x4xf32> -> tensor<?x1x2x2xf32> loc("resnet.py":20:0)
  %pq = dgtorch.quantize_per_tensor %p {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x2xf32> -> tensor<?x1x2x2xi8>
  %pd = dgtorch.dequantize_per_tensor %pq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x2xi8> -> tensor<?x1x2x2xf32>
  func.return %pd : tensor<?x1x2x2xf32>
}

// -----

// max_pool2d in ceil mode whose last window overhangs the input (5 = 2 + 2 + 1).
// CHECK-LABEL: squeeze.py:7:0: error: 'dgtorch.max_pool2d': ceil_mode=True makes the last window read past the input edge, which is padding: max_pool2d does not support padding; use ceil_mode=False
func.func @max_pool2d_ceil_overhang(%x: tensor<?x1x5x5xf32>) -> tensor<?x1x3x3xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x5x5xf32> -> tensor<?x1x5x5xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x5x5xi8> -> tensor<?x1x5x5xf32>
  %p = dgtorch.max_pool2d %xd {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = true} : tensor<?x1x5x5xf32> -> tensor<?x1x3x3xf32> loc("squeeze.py":7:0)
  %pq = dgtorch.quantize_per_tensor %p {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x3xf32> -> tensor<?x1x3x3xi8>
  %pd = dgtorch.dequantize_per_tensor %pq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x3xi8> -> tensor<?x1x3x3xf32>
  func.return %pd : tensor<?x1x3x3xf32>
}

// -----

// A dilated max_pool2d.
// CHECK-LABEL: dilated_pool.py:2:0: error: 'dgtorch.max_pool2d': dilation [2, 2] is not supported: dilation must be 1
func.func @max_pool2d_dilation(%x: tensor<?x1x5x5xf32>) -> tensor<?x1x3x3xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x5x5xf32> -> tensor<?x1x5x5xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x5x5xi8> -> tensor<?x1x5x5xf32>
  %p = dgtorch.max_pool2d %xd {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 2, 2>, ceil_mode = false} : tensor<?x1x5x5xf32> -> tensor<?x1x3x3xf32> loc("dilated_pool.py":2:0)
  %pq = dgtorch.quantize_per_tensor %p {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x3xf32> -> tensor<?x1x3x3xi8>
  %pd = dgtorch.dequantize_per_tensor %pq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x3xi8> -> tensor<?x1x3x3xf32>
  func.return %pd : tensor<?x1x3x3xf32>
}

// -----

// An F.pad before a max_pool2d is padding as well.
// CHECK-LABEL: pad.py:3:0: error: 'dgq.pad': max_pool2d does not support padding, also not through a preceding F.pad: remove the F.pad
func.func @pad_max_pool2d(%x: tensor<?x1x4x4xf32>) -> tensor<?x1x3x3xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xf32> -> tensor<?x1x4x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xi8> -> tensor<?x1x4x4xf32>
  %p = dgtorch.pad %xd {pad = array<i64: 1, 1, 1, 1>, value = 0.0 : f64} : tensor<?x1x4x4xf32> -> tensor<?x1x6x6xf32> loc("pad.py":3:0)
  %pq = dgtorch.quantize_per_tensor %p {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x6x6xf32> -> tensor<?x1x6x6xi8>
  %pd = dgtorch.dequantize_per_tensor %pq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x6x6xi8> -> tensor<?x1x6x6xf32>
  %m = dgtorch.max_pool2d %pd {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : tensor<?x1x6x6xf32> -> tensor<?x1x3x3xf32>
  %mq = dgtorch.quantize_per_tensor %m {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x3xf32> -> tensor<?x1x3x3xi8>
  %md = dgtorch.dequantize_per_tensor %mq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x3xi8> -> tensor<?x1x3x3xf32>
  func.return %md : tensor<?x1x3x3xf32>
}

// -----

// A standalone F.pad (here, before an add).
// CHECK-LABEL: pad.py:5:0: error: 'dgq.pad': standalone pad is not supported: F.pad is only supported as the immediate prefix of a Conv2d or AvgPool2d, into whose padding it folds
func.func @standalone_pad(%x: tensor<?x1x2x2xf32>) -> tensor<?x1x2x4xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x2xf32> -> tensor<?x1x2x2xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x2xi8> -> tensor<?x1x2x2xf32>
  %p = dgtorch.pad %xd {pad = array<i64: 1, 1>, value = 0.0 : f64} : tensor<?x1x2x2xf32> -> tensor<?x1x2x4xf32> loc("pad.py":5:0)
  %pq = dgtorch.quantize_per_tensor %p {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x4xf32> -> tensor<?x1x2x4xi8>
  %pd = dgtorch.dequantize_per_tensor %pq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x4xi8> -> tensor<?x1x2x4xf32>
  %s = dgtorch.add %pd, %pd : (tensor<?x1x2x4xf32>, tensor<?x1x2x4xf32>) -> tensor<?x1x2x4xf32>
  %sq = dgtorch.quantize_per_tensor %s {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x4xf32> -> tensor<?x1x2x4xi8>
  %sd = dgtorch.dequantize_per_tensor %sq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x4xi8> -> tensor<?x1x2x4xf32>
  func.return %sd : tensor<?x1x2x4xf32>
}

// -----

// F.pad with a value other than 0, and negative padding (cropping), before convolutions.
// CHECK-LABEL: pad.py:7:0: error: 'dgtorch.pad': padding value 1.5 is not supported: F.pad must pad with 0
// CHECK-NEXT:  pad.py:8:0: error: 'dgtorch.pad': negative padding [-1, 0, 0, 0] (cropping) is not supported
// CHECK-NEXT:  pad.py:9:0: error: 'dgtorch.pad': only H and W (the last two axes of an NCHW feature map) can be padded
func.func @pad_value_and_cropping(%x: tensor<?x1x4x4xf32>) -> (tensor<?x1x6x6xf32>, tensor<?x1x4x3xf32>, tensor<?x2x4x4xf32>) {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xf32> -> tensor<?x1x4x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xi8> -> tensor<?x1x4x4xf32>
  %p = dgtorch.pad %xd {pad = array<i64: 1, 1, 1, 1>, value = 1.5 : f64} : tensor<?x1x4x4xf32> -> tensor<?x1x6x6xf32> loc("pad.py":7:0)
  %c = dgtorch.pad %xd {pad = array<i64: -1, 0, 0, 0>, value = 0.0 : f64} : tensor<?x1x4x4xf32> -> tensor<?x1x4x3xf32> loc("pad.py":8:0)
  %a = dgtorch.pad %xd {pad = array<i64: 0, 0, 0, 0, 1, 0>, value = 0.0 : f64} : tensor<?x1x4x4xf32> -> tensor<?x2x4x4xf32> loc("pad.py":9:0)
  func.return %p, %c, %a : tensor<?x1x6x6xf32>, tensor<?x1x4x3xf32>, tensor<?x2x4x4xf32>
}

// -----

// F.pad before an avg_pool2d with count_include_pad=False and padding of its own.
// CHECK-LABEL: pad.py:11:0: error: 'dgq.pad': cannot fold into the 'dgq.avg_pool2d' at pool.py:12:0 (see its error)
// CHECK-NEXT:  pool.py:12:0: error: 'dgq.avg_pool2d': cannot absorb the F.pad before it at pad.py:11:0: with count_include_pad=False the pool excludes its own padding from the divisor, but PyTorch counts the F.pad zeros, and one pool cannot do both; use count_include_pad=True, or put all the padding in one of the two places
func.func @pad_avg_pool2d_mixed_counting(%x: tensor<?x1x4x4xf32>) -> tensor<?x1x3x3xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xf32> -> tensor<?x1x4x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xi8> -> tensor<?x1x4x4xf32>
  %p = dgtorch.pad %xd {pad = array<i64: 1, 1, 1, 1>, value = 0.0 : f64} : tensor<?x1x4x4xf32> -> tensor<?x1x6x6xf32> loc("pad.py":11:0)
  %pq = dgtorch.quantize_per_tensor %p {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x6x6xf32> -> tensor<?x1x6x6xi8>
  %pd = dgtorch.dequantize_per_tensor %pq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x6x6xi8> -> tensor<?x1x6x6xf32>
  %a = dgtorch.avg_pool2d %pd {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, ceil_mode = false, count_include_pad = false} : tensor<?x1x6x6xf32> -> tensor<?x1x3x3xf32> loc("pool.py":12:0)
  %aq = dgtorch.quantize_per_tensor %a {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x3xf32> -> tensor<?x1x3x3xi8>
  %ad = dgtorch.dequantize_per_tensor %aq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x3xi8> -> tensor<?x1x3x3xf32>
  func.return %ad : tensor<?x1x3x3xf32>
}

// -----

// F.pad whose zeros hold the last ceil-mode window of an avg_pool2d.
// CHECK-LABEL: pad.py:13:0: error: 'dgq.pad': cannot fold into the 'dgq.avg_pool2d' at pool.py:14:0 (see its error)
// CHECK-NEXT:  pool.py:14:0: error: 'dgq.avg_pool2d': cannot absorb the F.pad before it at pad.py:13:0: in ceil mode the pool's last window starts in the F.pad zeros, which become trailing padding in the fold, where torch's ceil rule has no window; use ceil_mode=False
func.func @pad_avg_pool2d_ceil_window(%x: tensor<?x1x4x4xf32>) -> tensor<?x1x3x3xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xf32> -> tensor<?x1x4x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xi8> -> tensor<?x1x4x4xf32>
  %p = dgtorch.pad %xd {pad = array<i64: 0, 1, 2, 0>, value = 0.0 : f64} : tensor<?x1x4x4xf32> -> tensor<?x1x6x5xf32> loc("pad.py":13:0)
  %pq = dgtorch.quantize_per_tensor %p {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x6x5xf32> -> tensor<?x1x6x5xi8>
  %pd = dgtorch.dequantize_per_tensor %pq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x6x5xi8> -> tensor<?x1x6x5xf32>
  %a = dgtorch.avg_pool2d %pd {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, ceil_mode = true, count_include_pad = false} : tensor<?x1x6x5xf32> -> tensor<?x1x3x3xf32> loc("pool.py":14:0)
  %aq = dgtorch.quantize_per_tensor %a {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x3xf32> -> tensor<?x1x3x3xi8>
  %ad = dgtorch.dequantize_per_tensor %aq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x3x3xi8> -> tensor<?x1x3x3xf32>
  func.return %ad : tensor<?x1x3x3xf32>
}

// -----

// An adaptive pool whose output size does not divide the input size.
// CHECK-LABEL: vgg.py:30:0: error: 'dgtorch.adaptive_avg_pool2d': adaptive_avg_pool2d from 7x8 to 3x4 is not supported: each input extent must be a multiple of the output size (7 % 3 = 1, 8 % 4 = 0); change the input size or output_size, or use AvgPool2d
func.func @adaptive_avg_pool2d_uneven(%x: tensor<?x2x7x8xf32>) -> tensor<?x2x3x4xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x7x8xf32> -> tensor<?x2x7x8xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x7x8xi8> -> tensor<?x2x7x8xf32>
  %p = dgtorch.adaptive_avg_pool2d %xd {output_size = array<i64: 3, 4>} : tensor<?x2x7x8xf32> -> tensor<?x2x3x4xf32> loc("vgg.py":30:0)
  %pq = dgtorch.quantize_per_tensor %p {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3x4xf32> -> tensor<?x2x3x4xi8>
  %pd = dgtorch.dequantize_per_tensor %pq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3x4xi8> -> tensor<?x2x3x4xf32>
  func.return %pd : tensor<?x2x3x4xf32>
}

// -----

// An average pool quantized onto another grid than its input's.
// CHECK-LABEL: pool.py:16:0: error: 'dgtorch.avg_pool2d': its result must be quantized on its input's grid (dg's quantizer shares it): input scale 0.5, zero point 3, result scale 0.25, zero point 0
func.func @avg_pool2d_new_grid(%x: tensor<?x1x4x4xf32>) -> tensor<?x1x2x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xf32> -> tensor<?x1x4x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xi8> -> tensor<?x1x4x4xf32>
  %p = dgtorch.avg_pool2d %xd {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, ceil_mode = false, count_include_pad = true} : tensor<?x1x4x4xf32> -> tensor<?x1x2x2xf32> loc("pool.py":16:0)
  %pq = dgtorch.quantize_per_tensor %p {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x2xf32> -> tensor<?x1x2x2xi8>
  %pd = dgtorch.dequantize_per_tensor %pq {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x2xi8> -> tensor<?x1x2x2xf32>
  func.return %pd : tensor<?x1x2x2xf32>
}

// -----

// softmax and sigmoid must be quantized onto the fixed grid.
// CHECK-LABEL: head.py:3:0: error: 'dgtorch.softmax': its result must be quantized on the fixed grid scale 0.00390625, zero point -128 (dg's quantizer pins it), got scale 0.0078125, zero point -128
// CHECK-NEXT:  head.py:4:0: error: 'dgtorch.sigmoid': its result must be quantized on the fixed grid scale 0.00390625, zero point -128 (dg's quantizer pins it), got none (the result must feed exactly one quantize)
func.func @softmax_sigmoid_wrong_grid(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  %s = dgtorch.softmax %xd {dim = 1 : i64} : tensor<?x4xf32> -> tensor<?x4xf32> loc("head.py":3:0)
  %sq = dgtorch.quantize_per_tensor %s {scale = 0.0078125 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x4xi8>
  %sd = dgtorch.dequantize_per_tensor %sq {scale = 0.0078125 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  %g = dgtorch.sigmoid %xd : tensor<?x4xf32> -> tensor<?x4xf32> loc("head.py":4:0)
  func.return %sd, %g : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// A cat of inputs on different grids that is not quantized once afterwards.
// CHECK-LABEL: cat.py:2:0: error: 'dgtorch.cat': its inputs must share one quantization grid (dg's quantizer shares it), or its result must feed exactly one quantize
func.func @concat_unshared_grids(%a: tensor<?x2xf32>, %b: tensor<?x2xf32>) -> tensor<?x4xf32> {
  %aq = dgtorch.quantize_per_tensor %a {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %ad = dgtorch.dequantize_per_tensor %aq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  %bq = dgtorch.quantize_per_tensor %b {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %bd = dgtorch.dequantize_per_tensor %bq {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  %c = dgtorch.cat %ad, %bd {dim = 1 : i64} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x4xf32> loc("cat.py":2:0)
  func.return %c : tensor<?x4xf32>
}

// -----

// permute is only accepted as dg.Flatten's NCHW -> NHWC step, directly flattened.
// CHECK-LABEL: perm.py:2:0: error: 'dgtorch.permute': permute [0, 1, 3, 2] is not supported: the only permute accepted is the NCHW -> NHWC reorder [0, 2, 3, 1] of dg.Flatten; use dg.Flatten or torch.transpose
// CHECK-NEXT:  perm.py:3:0: error: 'dgtorch.flatten': no dgq equivalent
// CHECK-NEXT:  perm.py:4:0: error: 'dgtorch.permute': permute [0, 2, 3, 1] must be flattened right away (as dg.Flatten does): it is only supported as the NCHW -> NHWC reorder of dg.Flatten
func.func @permute(%x: tensor<?x2x3x4xf32>) -> (tensor<?x24xf32>, tensor<?x3x4x2xf32>) {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3x4xf32> -> tensor<?x2x3x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3x4xi8> -> tensor<?x2x3x4xf32>
  %t = dgtorch.permute %xd {dims = array<i64: 0, 1, 3, 2>} : tensor<?x2x3x4xf32> -> tensor<?x2x4x3xf32> loc("perm.py":2:0)
  %f = dgtorch.flatten %t {start_dim = 1 : i64, end_dim = -1 : i64} : tensor<?x2x4x3xf32> -> tensor<?x24xf32> loc("perm.py":3:0)
  %u = dgtorch.permute %xd {dims = array<i64: 0, 2, 3, 1>} : tensor<?x2x3x4xf32> -> tensor<?x3x4x2xf32> loc("perm.py":4:0)
  func.return %f, %u : tensor<?x24xf32>, tensor<?x3x4x2xf32>
}

// -----

// A batch_norm after a linear whose result is also used elsewhere.
// CHECK-LABEL: mlp.py:3:0: error: 'dgtorch.linear': its result feeds a batch_norm that could not be folded into it (see its error)
// CHECK-NEXT:  'dgtorch.constant': a parameter of a batch_norm that could not be folded (see its error)
// CHECK:       mlp.py:4:0: error: 'dgtorch.batch_norm': cannot fold into the 'dgtorch.linear' at mlp.py:3:0: a batch_norm folds into a linear only as its only user, but the linear's result has 2 uses
func.func @batch_norm_after_shared_linear(%x: tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>) {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  %w = dgtorch.constant {value = dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>} : tensor<2x2xi8>
  %wd = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.5, 0.25>, zero_points = array<i64: 0, 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<2x2xi8> -> tensor<2x2xf32>
  %y = dgtorch.linear %xd, %wd : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32> loc("mlp.py":3:0)
  %gamma = dgtorch.constant {value = dense<[2.0, -1.0]> : tensor<2xf32>} : tensor<2xf32>
  %beta = dgtorch.constant {value = dense<[1.0, 0.0]> : tensor<2xf32>} : tensor<2xf32>
  %mean = dgtorch.constant {value = dense<[0.0, 1.0]> : tensor<2xf32>} : tensor<2xf32>
  %var = dgtorch.constant {value = dense<[3.0, 0.0]> : tensor<2xf32>} : tensor<2xf32>
  %n = dgtorch.batch_norm %y, %gamma, %beta, %mean, %var {eps = 1.0 : f64} : (tensor<?x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2xf32> loc("mlp.py":4:0)
  %nq = dgtorch.quantize_per_tensor %n {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %nd = dgtorch.dequantize_per_tensor %nq {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  %yq = dgtorch.quantize_per_tensor %y {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %yd = dgtorch.dequantize_per_tensor %yq {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  func.return %nd, %yd : tensor<?x2xf32>, tensor<?x2xf32>
}

// -----

// A batch_norm after something else than a linear (here: a graph input).
// CHECK-LABEL: bn.py:6:0: error: 'dgtorch.batch_norm': batch_norm after a graph input is not supported: a batch_norm must directly follow a linear (Linear -> BatchNorm1d, folded here) or a conv2d (Conv2d -> BatchNorm2d, folded by torchao when the model is prepared)
func.func @batch_norm_after_input(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  %gamma = dgtorch.constant {value = dense<[2.0, -1.0]> : tensor<2xf32>} : tensor<2xf32>
  %beta = dgtorch.constant {value = dense<[1.0, 0.0]> : tensor<2xf32>} : tensor<2xf32>
  %mean = dgtorch.constant {value = dense<[0.0, 1.0]> : tensor<2xf32>} : tensor<2xf32>
  %var = dgtorch.constant {value = dense<[3.0, 0.0]> : tensor<2xf32>} : tensor<2xf32>
  %n = dgtorch.batch_norm %xd, %gamma, %beta, %mean, %var {eps = 1.0 : f64} : (tensor<?x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2xf32> loc("bn.py":6:0)
  %nq = dgtorch.quantize_per_tensor %n {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %nd = dgtorch.dequantize_per_tensor %nq {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  func.return %nd : tensor<?x2xf32>
}

// -----

// A batch_norm after a conv2d (torchao folds Conv2d -> BatchNorm2d before dg sees it).
// CHECK-LABEL: bn.py:8:0: error: 'dgtorch.conv2d': no dgq equivalent
// CHECK:       bn.py:9:0: error: 'dgtorch.batch_norm': a batch_norm after a conv2d must already be folded into it: torchao folds Conv2d -> BatchNorm2d when the model is prepared (dg.prepare_qat / dg.prepare_ptq)
func.func @batch_norm_after_conv2d(%x: tensor<?x2x1x1xf32>) -> tensor<?x2x1x1xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x1x1xf32> -> tensor<?x2x1x1xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x1x1xi8> -> tensor<?x2x1x1xf32>
  %w = dgtorch.constant {value = dense<1> : tensor<2x2x1x1xi8>} : tensor<2x2x1x1xi8>
  %wd = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.25, 0.25>, zero_points = array<i64: 0, 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<2x2x1x1xi8> -> tensor<2x2x1x1xf32>
  %c = dgtorch.conv2d %xd, %wd {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x2x1x1xf32>, tensor<2x2x1x1xf32>) -> tensor<?x2x1x1xf32> loc("bn.py":8:0)
  %gamma = dgtorch.constant {value = dense<1.0> : tensor<2xf32>} : tensor<2xf32>
  %beta = dgtorch.constant {value = dense<1.0> : tensor<2xf32>} : tensor<2xf32>
  %mean = dgtorch.constant {value = dense<1.0> : tensor<2xf32>} : tensor<2xf32>
  %var = dgtorch.constant {value = dense<1.0> : tensor<2xf32>} : tensor<2xf32>
  %n = dgtorch.batch_norm %c, %gamma, %beta, %mean, %var {eps = 1.0 : f64} : (tensor<?x2x1x1xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x1x1xf32> loc("bn.py":9:0)
  %nq = dgtorch.quantize_per_tensor %n {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x1x1xf32> -> tensor<?x2x1x1xi8>
  %nd = dgtorch.dequantize_per_tensor %nq {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x1x1xi8> -> tensor<?x2x1x1xf32>
  func.return %nd : tensor<?x2x1x1xf32>
}

// -----

// A relu after a pool is standalone as well: only conv2d, linear and add take a relu tail.
// CHECK-LABEL: relu.py:9:0: error: 'dgtorch.relu': standalone relu is not supported: relu is only supported as the fusion tail of a conv2d, linear or add whose result it alone uses
func.func @relu_after_max_pool2d(%x: tensor<?x1x4x4xf32>) -> tensor<?x1x2x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xf32> -> tensor<?x1x4x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xi8> -> tensor<?x1x4x4xf32>
  %p = dgtorch.max_pool2d %xd {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, ceil_mode = false} : tensor<?x1x4x4xf32> -> tensor<?x1x2x2xf32>
  %r = dgtorch.relu %p : tensor<?x1x2x2xf32> -> tensor<?x1x2x2xf32> loc("relu.py":9:0)
  %rq = dgtorch.quantize_per_tensor %r {scale = 0.5 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x2xf32> -> tensor<?x1x2x2xi8>
  %rd = dgtorch.dequantize_per_tensor %rq {scale = 0.5 : f64, zero_point = -128 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x2x2xi8> -> tensor<?x1x2x2xf32>
  func.return %rd : tensor<?x1x2x2xf32>
}

// -----

// A batch_norm after a linear on [batch, sequence, features] normalizes the sequence axis.
// CHECK-LABEL: seq.py:3:0: error: 'dgtorch.linear': its result feeds a batch_norm that could not be folded into it (see its error)
// CHECK:       seq.py:4:0: error: 'dgtorch.batch_norm': cannot fold into the 'dgtorch.linear' at seq.py:3:0: batch_norm normalizes axis 1, the linear's output features only for a rank-2 result [batch, features]
func.func @batch_norm_after_rank3_linear(%x: tensor<?x2x2xf32>) -> tensor<?x2x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x2xf32> -> tensor<?x2x2xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x2xi8> -> tensor<?x2x2xf32>
  %w = dgtorch.constant {value = dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>} : tensor<2x2xi8>
  %wd = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.5, 0.25>, zero_points = array<i64: 0, 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<2x2xi8> -> tensor<2x2xf32>
  %y = dgtorch.linear %xd, %wd : (tensor<?x2x2xf32>, tensor<2x2xf32>) -> tensor<?x2x2xf32> loc("seq.py":3:0)
  %gamma = dgtorch.constant {value = dense<[2.0, -1.0]> : tensor<2xf32>} : tensor<2xf32>
  %beta = dgtorch.constant {value = dense<[1.0, 0.0]> : tensor<2xf32>} : tensor<2xf32>
  %mean = dgtorch.constant {value = dense<[0.0, 1.0]> : tensor<2xf32>} : tensor<2xf32>
  %var = dgtorch.constant {value = dense<[3.0, 0.0]> : tensor<2xf32>} : tensor<2xf32>
  %n = dgtorch.batch_norm %y, %gamma, %beta, %mean, %var {eps = 1.0 : f64} : (tensor<?x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x2xf32> loc("seq.py":4:0)
  %nq = dgtorch.quantize_per_tensor %n {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x2xf32> -> tensor<?x2x2xi8>
  %nd = dgtorch.dequantize_per_tensor %nq {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x2xi8> -> tensor<?x2x2xf32>
  func.return %nd : tensor<?x2x2xf32>
}

// -----

// A negative batch_norm factor cannot negate a weight of -128.
// CHECK-LABEL: mlp.py:3:0: error: 'dgtorch.linear': its result feeds a batch_norm
// CHECK:       mlp.py:4:0: error: 'dgtorch.batch_norm': cannot fold into the 'dgtorch.linear' at mlp.py:3:0: negative batch_norm factors need weights in [-127, 127] to negate them
func.func @batch_norm_negates_minus_128(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  %w = dgtorch.constant {value = dense<[[1, 2], [-128, 4]]> : tensor<2x2xi8>} : tensor<2x2xi8>
  %wd = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.5, 0.25>, zero_points = array<i64: 0, 0>, axis = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<2x2xi8> -> tensor<2x2xf32>
  %y = dgtorch.linear %xd, %wd : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32> loc("mlp.py":3:0)
  %gamma = dgtorch.constant {value = dense<[2.0, -1.0]> : tensor<2xf32>} : tensor<2xf32>
  %beta = dgtorch.constant {value = dense<[1.0, 0.0]> : tensor<2xf32>} : tensor<2xf32>
  %mean = dgtorch.constant {value = dense<[0.0, 1.0]> : tensor<2xf32>} : tensor<2xf32>
  %var = dgtorch.constant {value = dense<[3.0, 0.0]> : tensor<2xf32>} : tensor<2xf32>
  %n = dgtorch.batch_norm %y, %gamma, %beta, %mean, %var {eps = 1.0 : f64} : (tensor<?x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2xf32> loc("mlp.py":4:0)
  %nq = dgtorch.quantize_per_tensor %n {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %nd = dgtorch.dequantize_per_tensor %nq {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  func.return %nd : tensor<?x2xf32>
}

// -----

// A folded bias beyond int32 (beta 1e9 on the bias grid 0.5 * 0.5).
// CHECK-LABEL: mlp.py:3:0: error: 'dgtorch.linear': its result feeds a batch_norm
// CHECK:       mlp.py:4:0: error: 'dgtorch.batch_norm': cannot fold into the 'dgtorch.linear' at mlp.py:3:0: the folded bias does not fit int32 on the grid input scale x weight scale
func.func @batch_norm_bias_overflow(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  %w = dgtorch.constant {value = dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>} : tensor<2x2xi8>
  %wd = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.5, 0.25>, zero_points = array<i64: 0, 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<2x2xi8> -> tensor<2x2xf32>
  %y = dgtorch.linear %xd, %wd : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32> loc("mlp.py":3:0)
  %gamma = dgtorch.constant {value = dense<[2.0, -1.0]> : tensor<2xf32>} : tensor<2xf32>
  %beta = dgtorch.constant {value = dense<[1.0e9, 0.0]> : tensor<2xf32>} : tensor<2xf32>
  %mean = dgtorch.constant {value = dense<[0.0, 1.0]> : tensor<2xf32>} : tensor<2xf32>
  %var = dgtorch.constant {value = dense<[3.0, 0.0]> : tensor<2xf32>} : tensor<2xf32>
  %n = dgtorch.batch_norm %y, %gamma, %beta, %mean, %var {eps = 1.0 : f64} : (tensor<?x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2xf32> loc("mlp.py":4:0)
  %nq = dgtorch.quantize_per_tensor %n {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %nd = dgtorch.dequantize_per_tensor %nq {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  func.return %nd : tensor<?x2xf32>
}

// -----

// batch_norm parameters must be constants.
// CHECK-LABEL: mlp.py:3:0: error: 'dgtorch.linear': its result feeds a batch_norm
// CHECK:       mlp.py:4:0: error: 'dgtorch.batch_norm': cannot fold into the 'dgtorch.linear' at mlp.py:3:0: weight, bias, running_mean and running_var must be float constants
func.func @batch_norm_parameter_argument(%x: tensor<?x2xf32>, %g: tensor<2xf32>) -> tensor<?x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  %w = dgtorch.constant {value = dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>} : tensor<2x2xi8>
  %wd = dgtorch.dequantize_per_channel %w {scales = array<f64: 0.5, 0.25>, zero_points = array<i64: 0, 0>, axis = 0 : i64, quant_min = -127 : i64, quant_max = 127 : i64} : tensor<2x2xi8> -> tensor<2x2xf32>
  %y = dgtorch.linear %xd, %wd : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32> loc("mlp.py":3:0)
  %gamma = dgtorch.constant {value = dense<[2.0, -1.0]> : tensor<2xf32>} : tensor<2xf32>
  %beta = dgtorch.constant {value = dense<[1.0, 0.0]> : tensor<2xf32>} : tensor<2xf32>
  %mean = dgtorch.constant {value = dense<[0.0, 1.0]> : tensor<2xf32>} : tensor<2xf32>
  %var = dgtorch.constant {value = dense<[3.0, 0.0]> : tensor<2xf32>} : tensor<2xf32>
  %n = dgtorch.batch_norm %y, %g, %beta, %mean, %var {eps = 1.0 : f64} : (tensor<?x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2xf32> loc("mlp.py":4:0)
  %nq = dgtorch.quantize_per_tensor %n {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %nd = dgtorch.dequantize_per_tensor %nq {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  func.return %nd : tensor<?x2xf32>
}

// -----

// A batch_norm folds only into a quantized linear.
// CHECK-LABEL: 'dgtorch.constant': a constant must be an integer tensor that a dequantize consumes
// CHECK:       mlp.py:4:0: error: 'dgtorch.batch_norm': cannot fold into the 'dgtorch.linear' at mlp.py:3:0: its input, weight and bias must be quantized (a torchao partition)
func.func @batch_norm_after_float_linear(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  %w = dgtorch.constant {value = dense<0.5> : tensor<2x2xf32>} : tensor<2x2xf32>
  %y = dgtorch.linear %xd, %w : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32> loc("mlp.py":3:0)
  %gamma = dgtorch.constant {value = dense<1.0> : tensor<2xf32>} : tensor<2xf32>
  %beta = dgtorch.constant {value = dense<0.0> : tensor<2xf32>} : tensor<2xf32>
  %n = dgtorch.batch_norm %y, %gamma, %beta, %beta, %gamma {eps = 1.0 : f64} : (tensor<?x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2xf32> loc("mlp.py":4:0)
  %nq = dgtorch.quantize_per_tensor %n {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %nd = dgtorch.dequantize_per_tensor %nq {scale = 0.25 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  func.return %nd : tensor<?x2xf32>
}

// -----

// A slice of a spatial feature map (a rank-4 NCHW graph input).
// CHECK-LABEL: slice.py:2:0: error: 'dgtorch.slice': slice of a spatial feature map is not supported: dg slices sequence-domain tensors only (from a linear or matmul)
func.func @slice_spatial(%x: tensor<?x2x4x4xf32>) -> tensor<?x1x4x4xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x4x4xf32> -> tensor<?x2x4x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x4x4xi8> -> tensor<?x2x4x4xf32>
  %s = dgtorch.slice %xd {dim = 1 : i64, start = 0 : i64, end = 1 : i64, step = 1 : i64} : tensor<?x2x4x4xf32> -> tensor<?x1x4x4xf32> loc("slice.py":2:0)
  %sq = dgtorch.quantize_per_tensor %s {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xf32> -> tensor<?x1x4x4xi8>
  %sd = dgtorch.dequantize_per_tensor %sq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x1x4x4xi8> -> tensor<?x1x4x4xf32>
  func.return %sd : tensor<?x1x4x4xf32>
}

// -----

// A slice with step 2.
// CHECK-LABEL: slice.py:3:0: error: 'dgtorch.slice': slice step 2 is not supported: the step must be 1
func.func @slice_step(%x: tensor<?x5x8xf32>) -> tensor<?x5x4xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x5x8xf32> -> tensor<?x5x8xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x5x8xi8> -> tensor<?x5x8xf32>
  %s = dgtorch.slice %xd {dim = 2 : i64, start = 0 : i64, end = 8 : i64, step = 2 : i64} : tensor<?x5x8xf32> -> tensor<?x5x4xf32> loc("slice.py":3:0)
  %sq = dgtorch.quantize_per_tensor %s {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x5x4xf32> -> tensor<?x5x4xi8>
  %sd = dgtorch.dequantize_per_tensor %sq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x5x4xi8> -> tensor<?x5x4xf32>
  func.return %sd : tensor<?x5x4xf32>
}

// -----

// A mul by a float constant that was never quantized.
// CHECK-LABEL: mul.py:4:0: error: 'dgtorch.mul': its second operand must be a constant tensor quantized per tensor (dequantize of a dgq.constant): the device multiplies by stored integers
func.func @mul_by_float_constant(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  %c = dgtorch.constant {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : tensor<4xf32>
  %m = dgtorch.mul %xd, %c : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32> loc("mul.py":4:0)
  %mq = dgtorch.quantize_per_tensor %m {scale = 0.5 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x4xi8>
  %md = dgtorch.dequantize_per_tensor %mq {scale = 0.5 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  func.return %md : tensor<?x4xf32>
}

// -----

// A scalar multiplication that is not an attention score scale.
// CHECK-LABEL: scale.py:6:0: error: 'dgtorch.mul_scalar': a multiplication by a scalar is only supported as the score scale right after a matmul, which it folds into
func.func @mul_scalar_alone(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x4xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  %m = dgtorch.mul_scalar %xd {factor = 0.5 : f64} : tensor<?x4xf32> -> tensor<?x4xf32> loc("scale.py":6:0)
  %mq = dgtorch.quantize_per_tensor %m {scale = 0.5 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xf32> -> tensor<?x4xi8>
  %md = dgtorch.dequantize_per_tensor %mq {scale = 0.5 : f64, zero_point = 0 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4xi8> -> tensor<?x4xf32>
  func.return %md : tensor<?x4xf32>
}

// -----

// A score scale must be positive (the matmul's requantization multiplier cannot be negative).
// CHECK-LABEL: scores.py:8:0: error: 'dgtorch.matmul': no dgq equivalent
// CHECK-NEXT:  scores.py:9:0: error: 'dgtorch.mul_scalar': the score scale must be > 0, got -0.5
func.func @negative_score_scale(%a: tensor<?x2x4xf32>, %b: tensor<?x4x3xf32>) -> tensor<?x2x3xf32> {
  %aq = dgtorch.quantize_per_tensor %a {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x4xf32> -> tensor<?x2x4xi8>
  %ad = dgtorch.dequantize_per_tensor %aq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x4xi8> -> tensor<?x2x4xf32>
  %bq = dgtorch.quantize_per_tensor %b {scale = 0.25 : f64, zero_point = -2 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4x3xf32> -> tensor<?x4x3xi8>
  %bd = dgtorch.dequantize_per_tensor %bq {scale = 0.25 : f64, zero_point = -2 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4x3xi8> -> tensor<?x4x3xf32>
  %m = dgtorch.matmul %ad, %bd : (tensor<?x2x4xf32>, tensor<?x4x3xf32>) -> tensor<?x2x3xf32> loc("scores.py":8:0)
  %s = dgtorch.mul_scalar %m {factor = -0.5 : f64} : tensor<?x2x3xf32> -> tensor<?x2x3xf32> loc("scores.py":9:0)
  %sq = dgtorch.quantize_per_tensor %s {scale = 0.125 : f64, zero_point = 1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3xf32> -> tensor<?x2x3xi8>
  %sd = dgtorch.dequantize_per_tensor %sq {scale = 0.125 : f64, zero_point = 1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3xi8> -> tensor<?x2x3xf32>
  func.return %sd : tensor<?x2x3xf32>
}

// -----

// A matmul whose result is also used unquantized: its output must feed a quantized op.
// CHECK-LABEL: scores.py:8:0: error: 'dgtorch.matmul': its result must feed exactly one quantize: a matmul's output must be quantized (feed a quantized op)
func.func @matmul_unquantized_use(%a: tensor<?x2x4xf32>, %b: tensor<?x4x3xf32>) -> (tensor<?x2x3xf32>, tensor<?x2x3xf32>) {
  %aq = dgtorch.quantize_per_tensor %a {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x4xf32> -> tensor<?x2x4xi8>
  %ad = dgtorch.dequantize_per_tensor %aq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x4xi8> -> tensor<?x2x4xf32>
  %bq = dgtorch.quantize_per_tensor %b {scale = 0.25 : f64, zero_point = -2 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4x3xf32> -> tensor<?x4x3xi8>
  %bd = dgtorch.dequantize_per_tensor %bq {scale = 0.25 : f64, zero_point = -2 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x4x3xi8> -> tensor<?x4x3xf32>
  %m = dgtorch.matmul %ad, %bd : (tensor<?x2x4xf32>, tensor<?x4x3xf32>) -> tensor<?x2x3xf32> loc("scores.py":8:0)
  %mq = dgtorch.quantize_per_tensor %m {scale = 0.125 : f64, zero_point = 1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3xf32> -> tensor<?x2x3xi8>
  %md = dgtorch.dequantize_per_tensor %mq {scale = 0.125 : f64, zero_point = 1 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2x3xi8> -> tensor<?x2x3xf32>
  func.return %md, %m : tensor<?x2x3xf32>, tensor<?x2x3xf32>
}

// -----

// A dg.Norm whose result is not quantized: the norm and its parameter are reported.
// CHECK-LABEL: norm.py:4:0: error: 'dgtorch.constant': a parameter of a norm that could not be legalized (see its error)
// CHECK-NEXT:  norm.py:4:0: error: 'dgtorch.norm': a norm's input must be a per-tensor quantized value, its result quantized once (dg's quantizer annotates dg.Norm so), and its weight and bias float constants
func.func @norm_unquantized(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %xq = dgtorch.quantize_per_tensor %x {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xf32> -> tensor<?x2xi8>
  %xd = dgtorch.dequantize_per_tensor %xq {scale = 0.5 : f64, zero_point = 3 : i64, quant_min = -128 : i64, quant_max = 127 : i64} : tensor<?x2xi8> -> tensor<?x2xf32>
  %w = dgtorch.constant {value = dense<[2.0, 1.0]> : tensor<2xf32>} : tensor<2xf32> loc("norm.py":4:0)
  %n = dgtorch.norm %xd, %w {kind = "rms", eps = 1.0e-06 : f64} : (tensor<?x2xf32>, tensor<2xf32>) -> tensor<?x2xf32> loc("norm.py":4:0)
  func.return %n : tensor<?x2xf32>
}
