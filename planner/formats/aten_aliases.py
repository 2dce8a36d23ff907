"""Which ATen ops return an alias of an argument instead of a new tensor: the one table of them.

An exported graph names a tensor per op result, but a view (`view`, `t`, `split`, ...), an
in-place op (`add_`, `relu_`, ...) or an `alias` shares its argument's storage: it makes no new
buffer. The rule is ATen's own. An op's schema writes `Tensor(a)` on a result that aliases the
argument marked `Tensor(a)` (`Tensor(a!)`: and writes it; `Tensor(a)[]`: every element of a list;
`Tensor(b|a)`: may alias it or be new). `TABLE` below lists, for every `torch.ops.aten` overload
of torch 2.13 with such a result (out= overloads too: `add.out` returns its `out`), the argument
each result aliases: `self` (a view), `self!` (the argument, written in place), `self?` (maybe),
`-` (a new tensor). tests/test_torch_export.py rebuilds it from `torch.ops.aten.*._schema` where
torch is installed and lists the lines that differ.

Some ops alias only when they can: `reshape` and its kin return a view when the strides allow
one and a copy otherwise (`RESHAPES`), and `contiguous`, `to` and their kin return their argument
itself only when nothing about it changes (`SAME_OR_COPY`). `_unsafe_view` is a view that ATen
leaves unmarked, since its argument is a temporary no other op reads (`UNMARKED_VIEWS`).
"""

from __future__ import annotations

from dataclasses import dataclass

# op.overload, then per result the argument it aliases (see the module's docstring).
_TABLE_TEXT = """
__iand__.Scalar                                                self!
__iand__.Tensor                                                self!
__ilshift__.Scalar                                             self!
__ilshift__.Tensor                                             self!
__ior__.Scalar                                                 self!
__ior__.Tensor                                                 self!
__irshift__.Scalar                                             self!
__irshift__.Tensor                                             self!
__ixor__.Scalar                                                self!
__ixor__.Tensor                                                self!
__lshift__.Scalar_out                                          out!
__lshift__.Tensor_out                                          out!
__rshift__.Scalar_out                                          out!
__rshift__.Tensor_out                                          out!
_adaptive_avg_pool2d.out                                       out!
_adaptive_avg_pool2d_backward.out                              out!
_adaptive_avg_pool3d.out                                       out!
_adaptive_avg_pool3d_backward.out                              out!
_add_relu.Scalar_out                                           out!
_add_relu.out                                                  out!
_add_relu_.Scalar                                              self!
_add_relu_.Tensor                                              self!
_addmm_activation.out                                          out!
_aminmax.dim_out                                               out0! out1!
_aminmax.out                                                   out0! out1!
_amp_update_scale.out                                          out!
_amp_update_scale_.default                                     self!
_autocast_to_full_precision.default                            self
_autocast_to_reduced_precision.default                         self
_batch_norm_no_update.out                                      out0! out1! out2! out3!
_batch_norm_with_update.out                                    out! save_mean! save_invstd! reserve!
_cdist_backward.out                                            out!
_cdist_forward.out                                             out!
_cholesky_solve_helper.out                                     out!
_chunk_cat.out                                                 out!
_coalesce.out                                                  out!
_coalesced.out                                                 out!
_coalesced_.default                                            self!
_compute_linear_combination.out                                out!
_conj.default                                                  self
_conj_copy.out                                                 out!
_conj_physical.out                                             out!
_conv_depthwise2d.out                                          out!
_convert_indices_from_coo_to_csr.out                           out!
_convert_indices_from_csr_to_coo.out                           out!
_convolution.out                                               out!
_copy_from.out                                                 out!
_copy_from_and_resize.out                                      out!
_ctc_loss.Tensor_out                                           out0! out1!
_ctc_loss.out                                                  out0! out1!
_ctc_loss_backward.out                                         out!
_cudnn_ctc_loss.out                                            out0! out1!
_cudnn_init_dropout_state.out                                  out!
_cudnn_rnn.out                                                 out0! out1! out2! out3! out4!
_cudnn_rnn_flatten_weight.out                                  out!
_dirichlet_grad.out                                            out!
_efficientzerotensor.out                                       out!
_embedding_bag.out                                             out0! out1! out2! out3!
_embedding_bag_dense_backward.out                              out!
_embedding_bag_forward_only.out                                out0! out1! out2! out3!
_embedding_bag_per_sample_weights_backward.out                 out!
_empty_affine_quantized.out                                    out!
_empty_per_channel_affine_quantized.out                        out!
_euclidean_dist.out                                            out!
_fake_quantize_learnable_per_channel_affine.out                out!
_fake_quantize_learnable_per_tensor_affine.out                 out!
_fake_quantize_per_tensor_affine_cachemask_tensor_qparams.out  out0! out1!
_fft_c2c.out                                                   out!
_fft_c2r.out                                                   out!
_fft_r2c.out                                                   out!
_fill_mem_eff_dropout_mask_.default                            self!
_foobar.out                                                    out!
_fused_dropout.out                                             out0! out1!
_fused_moving_avg_obs_fq_helper.out                            out0! out1!
_fw_primal.default                                             self
_fw_primal_copy.out                                            out!
_grad_sum_to_size.default                                      self
_grid_sampler_2d_cpu_fallback.out                              out!
_histogramdd_from_bin_cts.out                                  out!
_histogramdd_from_bin_tensors.out                              out!
_index_put_impl.out                                            out!
_index_put_impl_.default                                       self!
_index_put_impl_.hacked_twin                                   self!
_indices.default                                               self
_indices_copy.out                                              out!
_int_mm.out                                                    out!
_linalg_det.result                                             result! LU! pivots!
_linalg_eigh.eigenvalues                                       eigenvalues! eigenvectors!
_linalg_slogdet.sign                                           sign! logabsdet! LU! pivots!
_linalg_solve_ex.result                                        result! LU! pivots! info!
_linalg_svd.U                                                  U! S! Vh!
_log_softmax.out                                               out!
_log_softmax_backward_data.out                                 out!
_logcumsumexp.out                                              out!
_lstm_mps.out                                                  out0! out1! out2! out3! out4! out5!
_make_dual.default                                             primal
_make_dual_copy.out                                            out!
_make_per_channel_quantized_tensor.out                         out!
_make_per_tensor_quantized_tensor.out                          out!
_masked_scale.out                                              out!
_masked_softmax.out                                            out!
_masked_softmax_backward.out                                   out!
_mkldnn_reshape.out                                            out!
_mkldnn_transpose.out                                          out!
_mkldnn_transpose_.default                                     self!
_mps_convolution.out                                           out!
_mps_convolution_transpose.out                                 out!
_native_batch_norm_legit.no_stats_out                          out! save_mean! save_invstd!
_native_batch_norm_legit.out                                   out! save_mean! save_invstd!
_native_batch_norm_legit_no_training.out                       out0! out1! out2!
_native_multi_head_attention.out                               out0! out1!
_ncf_unsqueeze.default                                         self
_ncf_view.default                                              self
_neg_view.default                                              self
_neg_view_copy.out                                             out!
_nested_from_padded.out                                        out!
_nested_from_padded_and_nested_example.out                     out!
_nested_get_values.default                                     self
_nested_get_values_copy.out                                    out!
_nested_tensor_from_mask.out                                   out!
_nested_tensor_from_tensor_list.out                            out!
_nested_tensor_size.out                                        out!
_nested_tensor_storage_offsets.out                             out!
_nested_tensor_strides.out                                     out!
_nested_view_from_buffer.default                               self
_nested_view_from_buffer_copy.out                              out!
_nested_view_from_jagged.default                               self
_nested_view_from_jagged_copy.out                              out!
_new_zeros_with_same_feature_meta.out                          out!
_nnpack_spatial_convolution.out                                out!
_no_grad_fill_.default                                         tensor!
_no_grad_normal_.default                                       tensor!
_no_grad_uniform_.default                                      tensor!
_no_grad_zero_.default                                         tensor!
_pack_padded_sequence.out                                      out0! out1!
_pdist_backward.out                                            out!
_pdist_forward.out                                             out!
_philox_normal.out                                             out!
_philox_normal_.default                                        self!
_philox_uniform.out                                            out!
_philox_uniform_.default                                       self!
_pin_memory.out                                                out!
_reshape_alias.default                                         self
_reshape_alias_copy.out                                        out!
_resize_output.out                                             out!
_resize_output_.default                                        self!
_sample_dirichlet.out                                          out!
_scaled_mm.out                                                 out!
_scaled_mm_v2.out                                              out!
_segment_reduce_backward.out                                   out!
_slow_conv2d_backward.grad_input                               grad_input! grad_weight! grad_bias!
_slow_conv2d_backward.output_mask_out                          out0! out1! out2!
_slow_conv2d_forward.output                                    output!
_sobol_engine_ff_.default                                      self!
_sobol_engine_initialize_state_.default                        self!
_sobol_engine_scramble_.default                                self!
_softmax.out                                                   out!
_softmax_backward_data.out                                     grad_input!
_sparse_addmm.out                                              out!
_sparse_broadcast_to.default                                   self
_sparse_broadcast_to_copy.out                                  out!
_sparse_coo_tensor_with_dims.out                               out!
_sparse_coo_tensor_with_dims_and_tensors.out                   out!
_sparse_csr_prod.dim_dtype_out                                 out!
_sparse_csr_sum.dim_dtype_out                                  out!
_sparse_log_softmax.out                                        out!
_sparse_log_softmax_backward_data.out                          out!
_sparse_mask_projection.out                                    out!
_sparse_softmax.out                                            out!
_sparse_softmax_backward_data.out                              out!
_sparse_sparse_matmul.out                                      out!
_sparse_sum.dim_out                                            out!
_sparse_sum_backward.out                                       out!
_spdiags.out                                                   out!
_stack.out                                                     out!
_standard_gamma.out                                            out!
_standard_gamma_grad.out                                       out!
_test_autograd_multiple_dispatch.fullcoverage_out              out!
_test_autograd_multiple_dispatch_view.default                  self
_test_autograd_multiple_dispatch_view_copy.out                 out!
_test_functorch_fallback.out                                   out!
_test_optional_filled_intlist.out                              out!
_test_optional_floatlist.out                                   out!
_test_optional_intlist.out                                     out!
_test_warn_in_autograd.out                                     out!
_thnn_fused_gru_cell.out                                       out0! out1!
_thnn_fused_gru_cell_backward.out                              out0! out1! out2! out3! out4!
_thnn_fused_lstm_cell.out                                      out0! out1! out2!
_thnn_fused_lstm_cell_backward_impl.out                        out0! out1! out2!
_to_copy.out                                                   out!
_to_dense.out                                                  out!
_to_sparse.out                                                 out!
_to_sparse.sparse_dim_out                                      out!
_to_sparse_bsc.out                                             out!
_to_sparse_bsr.out                                             out!
_to_sparse_csc.out                                             out!
_to_sparse_csr.out                                             out!
_transform_bias_rescale_qkv.out                                out0! out1! out2!
_transformer_encoder_layer_fwd.out                             out!
_trilinear.out                                                 out!
_triton_multi_head_attention.out                               out!
_triton_scaled_dot_attention.out                               out!
_unique.out                                                    out0! out1!
_unique2.out                                                   out0! out1! out2!
_unpack_dual.default                                           dual -
_unsafe_view.out                                               out!
_upsample_bicubic2d_aa.out                                     out!
_upsample_bicubic2d_aa_backward.grad_input                     grad_input!
_upsample_bilinear2d_aa.out                                    out!
_upsample_bilinear2d_aa_backward.grad_input                    grad_input!
_upsample_lanczos2d_aa.out                                     out!
_upsample_lanczos2d_aa_backward.grad_input                     grad_input!
_upsample_nearest_exact1d.out                                  out!
_upsample_nearest_exact1d_backward.grad_input                  grad_input!
_upsample_nearest_exact2d.out                                  out!
_upsample_nearest_exact2d_backward.grad_input                  grad_input!
_upsample_nearest_exact3d.out                                  out!
_upsample_nearest_exact3d_backward.grad_input                  grad_input!
_values.default                                                self
_values_copy.out                                               out!
_weight_norm_interface.out                                     out0! out1!
_weight_norm_interface_backward.out                            out0! out1!
abs.out                                                        out!
abs_.default                                                   self!
absolute.out                                                   out!
absolute_.default                                              self!
acos.out                                                       out!
acos_.default                                                  self!
acosh.out                                                      out!
acosh_.default                                                 self!
adaptive_avg_pool1d.out                                        out!
adaptive_avg_pool2d.out                                        out!
adaptive_avg_pool3d.out                                        out!
adaptive_avg_pool3d_backward.grad_input                        grad_input!
adaptive_max_pool2d.out                                        out! indices!
adaptive_max_pool2d_backward.grad_input                        grad_input!
adaptive_max_pool3d.out                                        out! indices!
adaptive_max_pool3d_backward.grad_input                        grad_input!
add.Scalar_out                                                 out!
add.out                                                        out!
add_.Scalar                                                    self!
add_.Tensor                                                    self!
addbmm.out                                                     out!
addbmm_.default                                                self!
addcdiv.out                                                    out!
addcdiv_.default                                               self!
addcmul.out                                                    out!
addcmul_.default                                               self!
addmm.dtype_out                                                out!
addmm.out                                                      out!
addmm_.default                                                 self!
addmv.out                                                      out!
addmv_.default                                                 self!
addr.out                                                       out!
addr_.default                                                  self!
adjoint.default                                                self
affine_grid_generator.out                                      out!
alias.default                                                  self
alias_copy.out                                                 out!
all.all_out                                                    out!
all.dims_out                                                   out!
all.out                                                        out!
alpha_dropout_.default                                         self!
amax.out                                                       out!
amin.out                                                       out!
aminmax.out                                                    min! max!
angle.out                                                      out!
any.all_out                                                    out!
any.dims_out                                                   out!
any.out                                                        out!
arange.out                                                     out!
arange.start_out                                               out!
arccos.out                                                     out!
arccos_.default                                                self!
arccosh.out                                                    out!
arccosh_.default                                               self!
arcsin.out                                                     out!
arcsin_.default                                                self!
arcsinh.out                                                    out!
arcsinh_.default                                               self!
arctan.out                                                     out!
arctan2.out                                                    out!
arctan2_.default                                               self!
arctan_.default                                                self!
arctanh.out                                                    out!
arctanh_.default                                               self!
argmax.out                                                     out!
argmin.out                                                     out!
argsort.stable_out                                             out!
as_strided.default                                             self
as_strided_.default                                            self!
as_strided_copy.out                                            out!
as_strided_scatter.out                                         out!
as_tensor.default                                              data?
asin.out                                                       out!
asin_.default                                                  self!
asinh.out                                                      out!
asinh_.default                                                 self!
atan.out                                                       out!
atan2.out                                                      out!
atan2_.default                                                 self!
atan_.default                                                  self!
atanh.out                                                      out!
atanh_.default                                                 self!
avg_pool1d.out                                                 out!
avg_pool2d.out                                                 out!
avg_pool2d_backward.grad_input                                 grad_input!
avg_pool3d.out                                                 out!
avg_pool3d_backward.grad_input                                 grad_input!
baddbmm.dtype_out                                              out!
baddbmm.out                                                    out!
baddbmm_.default                                               self!
bartlett_window.out                                            out!
bartlett_window.periodic_out                                   out!
batch_norm_backward_elemt.out                                  out!
batch_norm_backward_reduce.out                                 out0! out1! out2! out3!
batch_norm_elemt.out                                           out!
batch_norm_gather_stats.out                                    out0! out1!
batch_norm_gather_stats_with_counts.out                        out0! out1!
batch_norm_stats.out                                           out0! out1!
batch_norm_update_stats.out                                    out0! out1!
bernoulli.Tensor_out                                           out!
bernoulli.float_out                                            out!
bernoulli.out                                                  out!
bernoulli_.Tensor                                              self!
bernoulli_.float                                               self!
binary_cross_entropy.out                                       out!
binary_cross_entropy_backward.grad_input                       grad_input!
binary_cross_entropy_with_logits.out                           out!
bincount.out                                                   out!
binomial.out                                                   out!
bitwise_and.Scalar_Tensor_out                                  out!
bitwise_and.Scalar_out                                         out!
bitwise_and.Tensor_out                                         out!
bitwise_and_.Scalar                                            self!
bitwise_and_.Tensor                                            self!
bitwise_left_shift.Scalar_Tensor_out                           out!
bitwise_left_shift.Tensor_Scalar_out                           out!
bitwise_left_shift.Tensor_out                                  out!
bitwise_left_shift_.Tensor                                     self!
bitwise_left_shift_.Tensor_Scalar                              self!
bitwise_not.out                                                out!
bitwise_not_.default                                           self!
bitwise_or.Scalar_Tensor_out                                   out!
bitwise_or.Scalar_out                                          out!
bitwise_or.Tensor_out                                          out!
bitwise_or_.Scalar                                             self!
bitwise_or_.Tensor                                             self!
bitwise_right_shift.Scalar_Tensor_out                          out!
bitwise_right_shift.Tensor_Scalar_out                          out!
bitwise_right_shift.Tensor_out                                 out!
bitwise_right_shift_.Tensor                                    self!
bitwise_right_shift_.Tensor_Scalar                             self!
bitwise_xor.Scalar_Tensor_out                                  out!
bitwise_xor.Scalar_out                                         out!
bitwise_xor.Tensor_out                                         out!
bitwise_xor_.Scalar                                            self!
bitwise_xor_.Tensor                                            self!
blackman_window.out                                            out!
blackman_window.periodic_out                                   out!
block_diag.out                                                 out!
bmm.dtype_out                                                  out!
bmm.out                                                        out!
broadcast_to.default                                           self
bucketize.Scalar_out                                           out!
bucketize.Tensor_out                                           out!
cat.out                                                        out!
cauchy.out                                                     out!
cauchy_.default                                                self!
ccol_indices.default                                           self
ccol_indices_copy.out                                          out!
ceil.out                                                       out!
ceil_.default                                                  self!
celu.out                                                       out!
celu_.default                                                  self!
chain_matmul.out                                               out!
channel_shuffle.out                                            out!
cholesky.out                                                   out!
cholesky_inverse.out                                           out!
cholesky_solve.out                                             out!
chunk.default                                                  self
clamp.Tensor_out                                               out!
clamp.out                                                      out!
clamp_.Tensor                                                  self!
clamp_.default                                                 self!
clamp_max.Tensor_out                                           out!
clamp_max.out                                                  out!
clamp_max_.Tensor                                              self!
clamp_max_.default                                             self!
clamp_min.Tensor_out                                           out!
clamp_min.out                                                  out!
clamp_min_.Tensor                                              self!
clamp_min_.default                                             self!
clip.Tensor_out                                                out!
clip.out                                                       out!
clip_.Tensor                                                   self!
clip_.default                                                  self!
clone.out                                                      out!
coalesce.default                                               self
col2im.out                                                     out!
col_indices.default                                            self
col_indices_copy.out                                           out!
column_stack.out                                               out!
complex.out                                                    out!
concat.out                                                     out!
concatenate.out                                                out!
conj.default                                                   self
conj_physical.out                                              out!
conj_physical_.default                                         self!
constant_pad_nd.out                                            out!
contiguous.default                                             self
conv_depthwise3d.out                                           out!
conv_tbc.out                                                   out!
convolution.out                                                out!
convolution_backward.out                                       out0! out1! out2!
convolution_backward_overrideable.out                          out0! out1! out2!
convolution_overrideable.out                                   out!
copy.out                                                       out!
copy_.Tensor                                                   self!
copy_.default                                                  self!
copy_.float                                                    self!
copy_.int                                                      self!
copy_sparse_to_sparse.out                                      out!
copy_sparse_to_sparse_.default                                 self!
copysign.Scalar_out                                            out!
copysign.out                                                   out!
copysign_.Scalar                                               self!
copysign_.Tensor                                               self!
cos.out                                                        out!
cos_.default                                                   self!
cosh.out                                                       out!
cosh_.default                                                  self!
count_nonzero.dim_IntList_out                                  out!
count_nonzero.out                                              out!
cpu.default                                                    self?
cross.out                                                      out!
crow_indices.default                                           self
crow_indices_copy.out                                          out!
cuda.default                                                   self?
cudnn_affine_grid_generator.out                                out!
cudnn_affine_grid_generator_backward.out                       out!
cudnn_batch_norm.out                                           out0! out1! out2! out3!
cudnn_batch_norm_backward.out                                  out0! out1! out2!
cudnn_convolution.out                                          out!
cudnn_convolution_add_relu.out                                 out!
cudnn_convolution_relu.out                                     out!
cudnn_convolution_transpose.out                                out!
cudnn_grid_sampler.out                                         out!
cudnn_grid_sampler_backward.out                                out0! out1!
cummax.out                                                     values! indices!
cummin.out                                                     values! indices!
cumprod.out                                                    out!
cumprod_.default                                               self!
cumsum.out                                                     out!
cumsum_.default                                                self!
deg2rad.out                                                    out!
deg2rad_.default                                               self!
dequantize.self_out                                            out!
detach.default                                                 self
detach_.default                                                self!
detach_copy.out                                                out!
diag.out                                                       out!
diag_embed.out                                                 out!
diagonal.default                                               self
diagonal_backward.out                                          out!
diagonal_copy.out                                              out!
diagonal_scatter.out                                           out!
diff.out                                                       out!
digamma.out                                                    out!
digamma_.default                                               self!
dist.out                                                       out!
div.Scalar_mode_out                                            out!
div.Scalar_out                                                 out!
div.out                                                        out!
div.out_mode                                                   out!
div_.Scalar                                                    self!
div_.Scalar_mode                                               self!
div_.Tensor                                                    self!
div_.Tensor_mode                                               self!
divide.out                                                     out!
divide.out_mode                                                out!
divide_.Scalar                                                 self!
divide_.Scalar_mode                                            self!
divide_.Tensor                                                 self!
divide_.Tensor_mode                                            self!
dot.out                                                        out!
dropout_.default                                               self!
dsplit.array                                                   self
dsplit.int                                                     self
dstack.out                                                     out!
elu.out                                                        out!
elu_.default                                                   self!
elu_backward.grad_input                                        grad_input!
embedding.out                                                  out!
embedding_dense_backward.out                                   out!
embedding_renorm.out                                           out!
embedding_renorm_.default                                      self!
empty.out                                                      out!
empty_like.out                                                 out!
empty_permuted.out                                             out!
empty_quantized.out                                            out!
empty_strided.out                                              out!
eq.Scalar_out                                                  out!
eq.Tensor_out                                                  out!
eq_.Scalar                                                     self!
eq_.Tensor                                                     self!
erf.out                                                        out!
erf_.default                                                   self!
erfc.out                                                       out!
erfc_.default                                                  self!
erfinv.out                                                     out!
erfinv_.default                                                self!
exp.out                                                        out!
exp2.out                                                       out!
exp2_.default                                                  self!
exp_.default                                                   self!
expand.default                                                 self
expand_as.default                                              self
expand_copy.out                                                out!
expm1.out                                                      out!
expm1_.default                                                 self!
exponential.out                                                out!
exponential_.default                                           self!
eye.m_out                                                      out!
eye.out                                                        out!
fake_quantize_per_channel_affine_cachemask.out                 out0! out1!
fake_quantize_per_tensor_affine_cachemask.out                  out0! out1!
feature_alpha_dropout_.default                                 self!
feature_dropout_.default                                       self!
fft_fft.out                                                    out!
fft_fft2.out                                                   out!
fft_fftfreq.out                                                out!
fft_fftn.out                                                   out!
fft_hfft.out                                                   out!
fft_hfft2.out                                                  out!
fft_hfftn.out                                                  out!
fft_ifft.out                                                   out!
fft_ifft2.out                                                  out!
fft_ifftn.out                                                  out!
fft_ihfft.out                                                  out!
fft_ihfft2.out                                                 out!
fft_ihfftn.out                                                 out!
fft_irfft.out                                                  out!
fft_irfft2.out                                                 out!
fft_irfftn.out                                                 out!
fft_rfft.out                                                   out!
fft_rfft2.out                                                  out!
fft_rfftfreq.out                                               out!
fft_rfftn.out                                                  out!
fill.Scalar_out                                                out!
fill.Tensor_out                                                out!
fill_.Scalar                                                   self!
fill_.Tensor                                                   self!
fill_diagonal_.default                                         self!
fix.out                                                        out!
fix_.default                                                   self!
flatten.using_ints                                             self
flip.out                                                       out!
float_power.Scalar_out                                         out!
float_power.Tensor_Scalar_out                                  out!
float_power.Tensor_Tensor_out                                  out!
float_power_.Scalar                                            self!
float_power_.Tensor                                            self!
floor.out                                                      out!
floor_.default                                                 self!
floor_divide.Scalar_out                                        out!
floor_divide.out                                               out!
floor_divide_.Scalar                                           self!
floor_divide_.Tensor                                           self!
fmax.out                                                       out!
fmin.out                                                       out!
fmod.Scalar_out                                                out!
fmod.Tensor_out                                                out!
fmod_.Scalar                                                   self!
fmod_.Tensor                                                   self!
frac.out                                                       out!
frac_.default                                                  self!
fractional_max_pool2d.output                                   output! indices!
fractional_max_pool2d_backward.grad_input                      grad_input!
fractional_max_pool3d.output                                   output! indices!
fractional_max_pool3d_backward.grad_input                      grad_input!
frexp.Tensor_out                                               mantissa! exponent!
frobenius_norm.out                                             out!
from_file.out                                                  out!
full.out                                                       out!
full_like.out                                                  out!
gather.out                                                     out!
gcd.out                                                        out!
gcd_.default                                                   self!
ge.Scalar_out                                                  out!
ge.Tensor_out                                                  out!
ge_.Scalar                                                     self!
ge_.Tensor                                                     self!
gelu.out                                                       out!
gelu_.default                                                  self!
gelu_backward.grad_input                                       grad_input!
geometric.out                                                  out!
geometric_.default                                             self!
geqrf.a                                                        a! tau!
ger.out                                                        out!
glu.out                                                        out!
glu_backward.grad_input                                        grad_input!
glu_backward_jvp.out                                           out!
glu_jvp.out                                                    out!
greater.Scalar_out                                             out!
greater.Tensor_out                                             out!
greater_.Scalar                                                self!
greater_.Tensor                                                self!
greater_equal.Scalar_out                                       out!
greater_equal.Tensor_out                                       out!
greater_equal_.Scalar                                          self!
greater_equal_.Tensor                                          self!
grid_sampler_2d.out                                            out!
grid_sampler_2d_backward.out                                   out0! out1!
grid_sampler_3d.out                                            out!
grid_sampler_3d_backward.out                                   out0! out1!
gt.Scalar_out                                                  out!
gt.Tensor_out                                                  out!
gt_.Scalar                                                     self!
gt_.Tensor                                                     self!
hamming_window.out                                             out!
hamming_window.periodic_alpha_beta_out                         out!
hamming_window.periodic_alpha_out                              out!
hamming_window.periodic_out                                    out!
hann_window.out                                                out!
hann_window.periodic_out                                       out!
hardshrink.out                                                 out!
hardshrink_backward.grad_input                                 grad_input!
hardsigmoid.out                                                out!
hardsigmoid_.default                                           self!
hardsigmoid_backward.grad_input                                grad_input!
hardswish.out                                                  out!
hardswish_.default                                             self!
hardswish_backward.out                                         out!
hardtanh.out                                                   out!
hardtanh_.default                                              self!
hardtanh_backward.grad_input                                   grad_input!
hash_tensor.out                                                out!
heaviside.out                                                  out!
heaviside_.default                                             self!
histc.out                                                      out!
histogram.bin_ct_out                                           hist! bin_edges!
histogram.bins_tensor_out                                      hist! bin_edges!
hsplit.array                                                   self
hsplit.int                                                     self
hspmm.out                                                      out!
hstack.out                                                     out!
huber_loss.out                                                 out!
huber_loss_backward.out                                        grad_input!
hypot.out                                                      out!
hypot_.default                                                 self!
i0.out                                                         out!
i0_.default                                                    self!
igamma.out                                                     out!
igamma_.default                                                self!
igammac.out                                                    out!
igammac_.default                                               self!
im2col.out                                                     out!
imag.default                                                   self
index.Tensor_out                                               out!
index_add.out                                                  out!
index_add_.default                                             self!
index_copy.out                                                 out!
index_copy_.default                                            self!
index_fill.int_Scalar_out                                      out!
index_fill.int_Tensor_out                                      out!
index_fill_.int_Scalar                                         self!
index_fill_.int_Tensor                                         self!
index_put.out                                                  out!
index_put_.default                                             self!
index_put_.hacked_twin                                         self!
index_reduce.out                                               out!
index_reduce_.default                                          self!
index_select.out                                               out!
indices.default                                                self
indices_copy.out                                               out!
inner.out                                                      out!
int_repr.out                                                   out!
inverse.out                                                    out!
isin.Scalar_Tensor_out                                         out!
isin.Tensor_Scalar_out                                         out!
isin.Tensor_Tensor_out                                         out!
isinf.out                                                      out!
isnan.out                                                      out!
isneginf.out                                                   out!
isposinf.out                                                   out!
kaiser_window.beta_out                                         out!
kaiser_window.out                                              out!
kaiser_window.periodic_out                                     out!
kron.out                                                       out!
kthvalue.values                                                values! indices!
lcm.out                                                        out!
lcm_.default                                                   self!
ldexp.out                                                      out!
ldexp_.default                                                 self!
le.Scalar_out                                                  out!
le.Tensor_out                                                  out!
le_.Scalar                                                     self!
le_.Tensor                                                     self!
leaky_relu.out                                                 out!
leaky_relu_.default                                            self!
leaky_relu_backward.grad_input                                 grad_input!
lerp.Scalar_out                                                out!
lerp.Tensor_out                                                out!
lerp_.Scalar                                                   self!
lerp_.Tensor                                                   self!
less.Scalar_out                                                out!
less.Tensor_out                                                out!
less_.Scalar                                                   self!
less_.Tensor                                                   self!
less_equal.Scalar_out                                          out!
less_equal.Tensor_out                                          out!
less_equal_.Scalar                                             self!
less_equal_.Tensor                                             self!
lgamma.out                                                     out!
lgamma_.default                                                self!
lift.out                                                       out!
lift_fresh.default                                             self
lift_fresh_copy.out                                            out!
linalg_cholesky.out                                            out!
linalg_cholesky_ex.L                                           L! info!
linalg_cond.out                                                out!
linalg_cond.p_str_out                                          out!
linalg_cross.out                                               out!
linalg_det.out                                                 out!
linalg_diagonal.default                                        A
linalg_eig.out                                                 eigenvalues! eigenvectors!
linalg_eigh.eigvals                                            eigvals! eigvecs!
linalg_eigvals.out                                             out!
linalg_eigvalsh.out                                            out!
linalg_householder_product.out                                 out!
linalg_inv.out                                                 out!
linalg_inv_ex.inverse                                          inverse! info!
linalg_ldl_factor.out                                          LD! pivots!
linalg_ldl_factor_ex.out                                       LD! pivots! info!
linalg_ldl_solve.out                                           out!
linalg_lstsq.out                                               solution! residuals! rank! singular_values!
linalg_lu.out                                                  P! L! U!
linalg_lu_factor.out                                           LU! pivots!
linalg_lu_factor_ex.out                                        LU! pivots! info!
linalg_lu_solve.out                                            out!
linalg_matmul.out                                              out!
linalg_matrix_exp.out                                          out!
linalg_matrix_norm.out                                         out!
linalg_matrix_norm.str_ord_out                                 out!
linalg_matrix_power.out                                        out!
linalg_matrix_rank.atol_rtol_float_out                         out!
linalg_matrix_rank.atol_rtol_tensor_out                        out!
linalg_matrix_rank.out                                         out!
linalg_matrix_rank.out_tol_tensor                              out!
linalg_multi_dot.out                                           out!
linalg_norm.ord_str_out                                        out!
linalg_norm.out                                                out!
linalg_pinv.atol_rtol_float_out                                out!
linalg_pinv.atol_rtol_tensor_out                               out!
linalg_pinv.out                                                out!
linalg_pinv.out_rcond_tensor                                   out!
linalg_qr.out                                                  Q! R!
linalg_slogdet.out                                             sign! logabsdet!
linalg_solve.out                                               out!
linalg_solve_ex.out                                            result! info!
linalg_solve_triangular.out                                    out!
linalg_svd.U                                                   U! S! Vh!
linalg_svdvals.out                                             out!
linalg_tensorinv.out                                           out!
linalg_tensorsolve.out                                         out!
linalg_vecdot.out                                              out!
linalg_vector_norm.out                                         out!
linear.out                                                     out!
linear_backward.out                                            out0! out1! out2!
linspace.Scalar_Tensor_out                                     out!
linspace.Tensor_Scalar_out                                     out!
linspace.Tensor_Tensor_out                                     out!
linspace.out                                                   out!
log.out                                                        out!
log10.out                                                      out!
log10_.default                                                 self!
log1p.out                                                      out!
log1p_.default                                                 self!
log2.out                                                       out!
log2_.default                                                  self!
log_.default                                                   self!
log_normal.out                                                 out!
log_normal_.default                                            self!
log_sigmoid.out                                                out!
log_sigmoid_backward.grad_input                                grad_input!
log_sigmoid_forward.output                                     output! buffer!
log_softmax.int_out                                            out!
logaddexp.out                                                  out!
logaddexp2.out                                                 out!
logcumsumexp.out                                               out!
logical_and.out                                                out!
logical_and_.default                                           self!
logical_not.out                                                out!
logical_not_.default                                           self!
logical_or.out                                                 out!
logical_or_.default                                            self!
logical_xor.out                                                out!
logical_xor_.default                                           self!
logit.out                                                      out!
logit_.default                                                 self!
logit_backward.grad_input                                      grad_input!
logspace.Scalar_Tensor_out                                     out!
logspace.Tensor_Scalar_out                                     out!
logspace.Tensor_Tensor_out                                     out!
logspace.out                                                   out!
logsumexp.out                                                  out!
lt.Scalar_out                                                  out!
lt.Tensor_out                                                  out!
lt_.Scalar                                                     self!
lt_.Tensor                                                     self!
lu_solve.out                                                   out!
lu_unpack.out                                                  P! L! U!
mH.a                                                           self
mH.default                                                     self
mT.a                                                           self
mT.default                                                     self
masked_fill.Scalar_out                                         out!
masked_fill.Tensor_out                                         out!
masked_fill_.Scalar                                            self!
masked_fill_.Tensor                                            self!
masked_scatter.out                                             out!
masked_scatter_.default                                        self!
masked_select.out                                              out!
matmul.out                                                     out!
matmul_backward.out                                            out0! out1!
matrix_H.a                                                     self
matrix_H.default                                               self
matrix_power.out                                               out!
max.dim_max                                                    max! max_values!
max.out                                                        out!
max.unary_out                                                  out!
max_pool2d_backward.out                                        out!
max_pool2d_with_indices.out                                    out! indices!
max_pool2d_with_indices_backward.grad_input                    grad_input!
max_pool3d_with_indices.out                                    out! indices!
max_pool3d_with_indices_backward.grad_input                    grad_input!
max_unpool2d.out                                               out!
max_unpool3d.out                                               out!
maximum.out                                                    out!
mean.dtype_out                                                 out!
mean.out                                                       out!
median.dim_values                                              values! indices!
median.out                                                     out!
min.dim_min                                                    min! min_indices!
min.out                                                        out!
min.unary_out                                                  out!
minimum.out                                                    out!
miopen_batch_norm.out                                          out0! out1! out2!
miopen_batch_norm_backward.out                                 out0! out1! out2!
miopen_convolution.out                                         out!
miopen_convolution_transpose.out                               out!
miopen_ctc_loss.out                                            out0! out1!
miopen_depthwise_convolution.out                               out!
miopen_rnn.out                                                 out0! out1! out2! out3! out4!
mish.out                                                       out!
mish_.default                                                  self!
mkldnn_adaptive_avg_pool2d.out                                 out!
mkldnn_adaptive_avg_pool2d_backward.out                        out!
mkldnn_convolution.out                                         out!
mkldnn_linear.out                                              out!
mkldnn_linear_backward.out                                     out0! out1! out2!
mkldnn_linear_backward_input.out                               out!
mkldnn_linear_backward_weights.out                             out0! out1!
mkldnn_max_pool2d.out                                          out!
mkldnn_max_pool2d_backward.out                                 out!
mkldnn_max_pool3d.out                                          out!
mkldnn_max_pool3d_backward.out                                 out!
mkldnn_reorder_conv2d_weight.out                               out!
mkldnn_reorder_conv3d_weight.out                               out!
mkldnn_rnn_layer.out                                           out0! out1! out2! out3!
mkldnn_rnn_layer_backward.out                                  out0! out1! out2! out3! out4! out5! out6!
mm.dtype_out                                                   out!
mm.out                                                         out!
mode.values                                                    values! indices!
moveaxis.int                                                   self
moveaxis.intlist                                               self
movedim.int                                                    self
movedim.intlist                                                self
mps_convolution_backward.out                                   out0! out1! out2!
mps_convolution_transpose_backward.out                         out0! out1!
mse_loss.out                                                   out!
mse_loss_backward.grad_input                                   grad_input!
msort.out                                                      out!
mul.Scalar_out                                                 out!
mul.out                                                        out!
mul_.Scalar                                                    self!
mul_.Tensor                                                    self!
multi_margin_loss.out                                          out!
multi_margin_loss_backward.grad_input                          grad_input!
multilabel_margin_loss.out                                     out!
multilabel_margin_loss_backward.grad_input                     grad_input!
multilabel_margin_loss_forward.output                          output! is_target!
multinomial.out                                                out!
multiply.out                                                   out!
multiply_.Scalar                                               self!
multiply_.Tensor                                               self!
mv.out                                                         out!
mvlgamma.out                                                   out!
mvlgamma_.default                                              self!
nan_to_num.out                                                 out!
nan_to_num_.default                                            self!
nanmean.out                                                    out!
nanmedian.dim_values                                           values! indices!
nanmedian.out                                                  out!
nanquantile.out                                                out!
nanquantile.scalar_out                                         out!
nansum.out                                                     out!
narrow.Tensor                                                  self
narrow.default                                                 self
narrow_copy.out                                                out!
native_batch_norm.out                                          out! save_mean! save_invstd!
native_batch_norm_backward.out                                 out0! out1! out2!
native_dropout.out                                             out0! out1!
native_dropout_backward.out                                    out!
native_group_norm.out                                          out0! out1! out2!
native_group_norm_backward.out                                 out0! out1! out2!
native_layer_norm.out                                          out0! out1! out2!
native_layer_norm_backward.out                                 out0! out1! out2!
native_norm.ScalarOpt_dim_dtype_out                            out!
native_norm.out                                                out!
ne.Scalar_out                                                  out!
ne.Tensor_out                                                  out!
ne_.Scalar                                                     self!
ne_.Tensor                                                     self!
neg.out                                                        out!
neg_.default                                                   self!
negative.out                                                   out!
negative_.default                                              self!
new_empty.out                                                  out!
new_empty_strided.out                                          out!
new_full.out                                                   out!
new_ones.out                                                   out!
new_zeros.out                                                  out!
nextafter.out                                                  out!
nextafter_.default                                             self!
nll_loss.out                                                   out!
nll_loss2d.out                                                 out!
nll_loss2d_backward.grad_input                                 grad_input!
nll_loss2d_forward.output                                      output! total_weight!
nll_loss_backward.grad_input                                   grad_input!
nll_loss_forward.output                                        output! total_weight!
nonzero.out                                                    out!
nonzero_static.out                                             out!
norm.ScalarOpt_dtype_out                                       out!
norm.Scalar_out                                                out!
norm.dtype_out                                                 out!
norm.out                                                       out!
normal.Tensor_Tensor_out                                       out!
normal.Tensor_float_out                                        out!
normal.float_Tensor_out                                        out!
normal.float_float_out                                         out!
normal.out                                                     out!
normal_.default                                                self!
not_equal.Scalar_out                                           out!
not_equal.Tensor_out                                           out!
not_equal_.Scalar                                              self!
not_equal_.Tensor                                              self!
nuclear_norm.dim_out                                           out!
nuclear_norm.out                                               out!
numpy_T.a                                                      self
numpy_T.default                                                self
ones.out                                                       out!
ones_like.out                                                  out!
orgqr.out                                                      out!
ormqr.out                                                      out!
outer.out                                                      out!
permute.default                                                self
permute_copy.out                                               out!
pin_memory.default                                             self
pixel_shuffle.out                                              out!
pixel_unshuffle.out                                            out!
poisson.out                                                    out!
polar.out                                                      out!
polygamma.out                                                  out!
polygamma_.default                                             self!
positive.default                                               self
pow.Scalar_out                                                 out!
pow.Tensor_Scalar_out                                          out!
pow.Tensor_Tensor_out                                          out!
pow_.Scalar                                                    self!
pow_.Tensor                                                    self!
prod.int_out                                                   out!
prod.out                                                       out!
put.out                                                        out!
put_.default                                                   self!
q_per_channel_scales.out                                       out!
q_per_channel_zero_points.out                                  out!
qr.Q                                                           Q! R!
quantile.out                                                   out!
quantile.scalar_out                                            out!
quantize_per_channel.out                                       out!
quantize_per_tensor.out                                        out!
quantize_per_tensor.tensor_qparams_out                         out!
quantize_per_tensor_dynamic.out                                out!
quantized_batch_norm.out                                       out!
quantized_max_pool1d.out                                       out!
quantized_max_pool2d.out                                       out!
quantized_max_pool3d.out                                       out!
rad2deg.out                                                    out!
rad2deg_.default                                               self!
rand.generator_out                                             out!
rand.out                                                       out!
rand_like.generator_out                                        out!
rand_like.out                                                  out!
randint.generator_out                                          out!
randint.low_generator_out                                      out!
randint.low_out                                                out!
randint.out                                                    out!
randint_like.Tensor_generator_out                              out!
randint_like.Tensor_out                                        out!
randint_like.generator_out                                     out!
randint_like.low_dtype_out                                     out!
randint_like.low_generator_dtype_out                           out!
randint_like.out                                               out!
randn.generator_out                                            out!
randn.out                                                      out!
randn_like.generator_out                                       out!
randn_like.out                                                 out!
random.from_out                                                out!
random.out                                                     out!
random.to_out                                                  out!
random_.default                                                self!
random_.from                                                   self!
random_.to                                                     self!
randperm.generator_out                                         out!
randperm.out                                                   out!
range.out                                                      out!
range.out_                                                     out!
ravel.default                                                  self
real.default                                                   self
reciprocal.out                                                 out!
reciprocal_.default                                            self!
reflection_pad1d.out                                           out!
reflection_pad1d_backward.grad_input                           grad_input!
reflection_pad2d.out                                           out!
reflection_pad2d_backward.grad_input                           grad_input!
reflection_pad3d.out                                           out!
reflection_pad3d_backward.grad_input                           grad_input!
relu.out                                                       out!
relu6_.default                                                 self!
relu_.default                                                  self!
remainder.Scalar_Tensor_out                                    out!
remainder.Scalar_out                                           out!
remainder.Tensor_out                                           out!
remainder_.Scalar                                              self!
remainder_.Tensor                                              self!
renorm.out                                                     out!
renorm_.default                                                self!
repeat.out                                                     out!
repeat_interleave.Tensor_out                                   out!
replication_pad1d.out                                          out!
replication_pad1d_backward.grad_input                          grad_input!
replication_pad2d.out                                          out!
replication_pad2d_backward.grad_input                          grad_input!
replication_pad3d.out                                          out!
replication_pad3d_backward.grad_input                          grad_input!
requires_grad_.default                                         self!
reshape.default                                                self
reshape_as.default                                             self
resize.out                                                     out!
resize_.default                                                self!
resize_as.out                                                  out!
resize_as_.default                                             self!
resize_as_sparse.out                                           out!
resize_as_sparse_.default                                      self!
resolve_conj.default                                           self
resolve_neg.default                                            self
roll.out                                                       out!
rot90.out                                                      out!
round.decimals_out                                             out!
round.out                                                      out!
round_.decimals                                                self!
round_.default                                                 self!
row_indices.default                                            self
row_indices_copy.out                                           out!
row_stack.out                                                  out!
rrelu_.default                                                 self!
rrelu_with_noise.out                                           out!
rrelu_with_noise_.default                                      self!
rrelu_with_noise_backward.out                                  out!
rsqrt.out                                                      out!
rsqrt_.default                                                 self!
rsub.Scalar_out                                                out!
rsub.Tensor_out                                                out!
scalar_tensor.out                                              out!
scatter.reduce_out                                             out!
scatter.src_out                                                out!
scatter.value_out                                              out!
scatter.value_reduce_out                                       out!
scatter_.reduce                                                self!
scatter_.src                                                   self!
scatter_.value                                                 self!
scatter_.value_reduce                                          self!
scatter_add.out                                                out!
scatter_add_.default                                           self!
scatter_reduce.two_out                                         out!
scatter_reduce_.two                                            self!
searchsorted.Scalar_out                                        out!
searchsorted.Tensor_out                                        out!
segment_reduce.out                                             out!
select.int                                                     self
select_backward.out                                            out!
select_copy.int_out                                            out!
select_scatter.out                                             out!
selu_.default                                                  self!
set.out                                                        out!
set.source_Storage_out                                         out!
set.source_Storage_storage_offset_out                          out!
set.source_Tensor_out                                          out!
set_.default                                                   self!
set_.source_Storage                                            self!
set_.source_Storage_storage_offset                             self!
set_.source_Tensor                                             self!
set_.source_Tensor_storage_offset                              self!
sgn.out                                                        out!
sgn_.default                                                   self!
sigmoid.out                                                    out!
sigmoid_.default                                               self!
sigmoid_backward.grad_input                                    grad_input!
sign.out                                                       out!
sign_.default                                                  self!
signbit.out                                                    out!
silu.out                                                       out!
silu_.default                                                  self!
silu_backward.grad_input                                       grad_input!
sin.out                                                        out!
sin_.default                                                   self!
sinc.out                                                       out!
sinc_.default                                                  self!
sinh.out                                                       out!
sinh_.default                                                  self!
slice.Tensor                                                   self
slice_backward.out                                             out!
slice_copy.Tensor_out                                          out!
slice_inverse.default                                          self
slice_scatter.out                                              out!
slogdet.out                                                    sign! logabsdet!
slow_conv3d.out                                                out!
slow_conv3d_forward.output                                     output!
slow_conv_dilated2d.out                                        out!
slow_conv_dilated3d.out                                        out!
slow_conv_transpose2d.out                                      out!
slow_conv_transpose3d.out                                      out!
smooth_l1_loss.out                                             out!
smooth_l1_loss_backward.grad_input                             grad_input!
soft_margin_loss.out                                           out!
soft_margin_loss_backward.grad_input                           grad_input!
softmax.int_out                                                out!
softplus.out                                                   out!
softplus_backward.grad_input                                   grad_input!
softshrink.out                                                 out!
softshrink_backward.grad_input                                 grad_input!
sort.values                                                    values! indices!
sort.values_stable                                             values! indices!
sparse_coo_tensor.size_out                                     out!
sparse_mask.out                                                out!
sparse_resize.out                                              out!
sparse_resize_.default                                         self!
sparse_resize_and_clear.out                                    out!
sparse_resize_and_clear_.default                               self!
sparse_sampled_addmm.out                                       out!
special_airy_ai.out                                            out!
special_bessel_j0.out                                          out!
special_bessel_j1.out                                          out!
special_bessel_y0.out                                          out!
special_bessel_y1.out                                          out!
special_chebyshev_polynomial_t.n_scalar_out                    out!
special_chebyshev_polynomial_t.out                             out!
special_chebyshev_polynomial_t.x_scalar_out                    out!
special_chebyshev_polynomial_u.n_scalar_out                    out!
special_chebyshev_polynomial_u.out                             out!
special_chebyshev_polynomial_u.x_scalar_out                    out!
special_chebyshev_polynomial_v.n_scalar_out                    out!
special_chebyshev_polynomial_v.out                             out!
special_chebyshev_polynomial_v.x_scalar_out                    out!
special_chebyshev_polynomial_w.n_scalar_out                    out!
special_chebyshev_polynomial_w.out                             out!
special_chebyshev_polynomial_w.x_scalar_out                    out!
special_digamma.out                                            out!
special_entr.out                                               out!
special_erf.out                                                out!
special_erfc.out                                               out!
special_erfcx.out                                              out!
special_erfinv.out                                             out!
special_exp2.out                                               out!
special_expit.out                                              out!
special_expm1.out                                              out!
special_gammainc.out                                           out!
special_gammaincc.out                                          out!
special_gammaln.out                                            out!
special_hermite_polynomial_h.n_scalar_out                      out!
special_hermite_polynomial_h.out                               out!
special_hermite_polynomial_h.x_scalar_out                      out!
special_hermite_polynomial_he.n_scalar_out                     out!
special_hermite_polynomial_he.out                              out!
special_hermite_polynomial_he.x_scalar_out                     out!
special_i0.out                                                 out!
special_i0e.out                                                out!
special_i1.out                                                 out!
special_i1e.out                                                out!
special_laguerre_polynomial_l.n_scalar_out                     out!
special_laguerre_polynomial_l.out                              out!
special_laguerre_polynomial_l.x_scalar_out                     out!
special_legendre_polynomial_p.n_scalar_out                     out!
special_legendre_polynomial_p.out                              out!
special_legendre_polynomial_p.x_scalar_out                     out!
special_log1p.out                                              out!
special_log_ndtr.out                                           out!
special_logit.out                                              out!
special_logsumexp.out                                          out!
special_modified_bessel_i0.out                                 out!
special_modified_bessel_i1.out                                 out!
special_modified_bessel_k0.out                                 out!
special_modified_bessel_k1.out                                 out!
special_multigammaln.out                                       out!
special_ndtr.out                                               out!
special_ndtri.out                                              out!
special_polygamma.out                                          out!
special_psi.out                                                out!
special_round.out                                              out!
special_scaled_modified_bessel_k0.out                          out!
special_scaled_modified_bessel_k1.out                          out!
special_shifted_chebyshev_polynomial_t.n_scalar_out            out!
special_shifted_chebyshev_polynomial_t.out                     out!
special_shifted_chebyshev_polynomial_t.x_scalar_out            out!
special_shifted_chebyshev_polynomial_u.n_scalar_out            out!
special_shifted_chebyshev_polynomial_u.out                     out!
special_shifted_chebyshev_polynomial_u.x_scalar_out            out!
special_shifted_chebyshev_polynomial_v.n_scalar_out            out!
special_shifted_chebyshev_polynomial_v.out                     out!
special_shifted_chebyshev_polynomial_v.x_scalar_out            out!
special_shifted_chebyshev_polynomial_w.n_scalar_out            out!
special_shifted_chebyshev_polynomial_w.out                     out!
special_shifted_chebyshev_polynomial_w.x_scalar_out            out!
special_sinc.out                                               out!
special_spherical_bessel_j0.out                                out!
special_xlog1py.other_scalar_out                               out!
special_xlog1py.out                                            out!
special_xlog1py.self_scalar_out                                out!
special_xlogy.other_scalar_out                                 out!
special_xlogy.out                                              out!
special_xlogy.self_scalar_out                                  out!
special_zeta.other_scalar_out                                  out!
special_zeta.out                                               out!
special_zeta.self_scalar_out                                   out!
split.Tensor                                                   self
split.default                                                  self
split.sizes                                                    self
split_with_sizes.default                                       self
sqrt.out                                                       out!
sqrt_.default                                                  self!
square.out                                                     out!
square_.default                                                self!
squeeze.default                                                self
squeeze.dim                                                    self
squeeze.dims                                                   self
squeeze_.default                                               self!
squeeze_.dim                                                   self!
squeeze_.dims                                                  self!
squeeze_copy.dim_out                                           out!
squeeze_copy.dims_out                                          out!
squeeze_copy.out                                               out!
sspaddmm.out                                                   out!
stack.out                                                      out!
std.correction_out                                             out!
std.out                                                        out!
std_mean.correction_out                                        out0! out1!
sub.Scalar_out                                                 out!
sub.out                                                        out!
sub_.Scalar                                                    self!
sub_.Tensor                                                    self!
subtract.out                                                   out!
subtract_.Scalar                                               self!
subtract_.Tensor                                               self!
sum.IntList_out                                                out!
sum.out                                                        out!
svd.U                                                          U! S! V!
swapaxes.default                                               self
swapaxes_.default                                              self!
swapdims.default                                               self
swapdims_.default                                              self!
t.default                                                      self
t_.default                                                     self!
t_copy.out                                                     out!
take.out                                                       out!
take_along_dim.out                                             out!
tan.out                                                        out!
tan_.default                                                   self!
tanh.out                                                       out!
tanh_.default                                                  self!
tanh_backward.grad_input                                       grad_input!
tensor_split.indices                                           self
tensor_split.sections                                          self
tensor_split.tensor_indices_or_sections                        self
tensordot.out                                                  out!
thnn_conv2d.out                                                out!
threshold.out                                                  out!
threshold_.default                                             self!
threshold_backward.grad_input                                  grad_input!
to.device                                                      self
to.dtype                                                       self
to.dtype_layout                                                self
to.other                                                       self
to.prim_Device                                                 self?
to.prim_dtype                                                  self?
to.prim_other                                                  self?
to_mkldnn.out                                                  out!
to_padded_tensor.out                                           out!
topk.values                                                    values! indices!
trace.out                                                      out!
transpose.int                                                  self
transpose_.default                                             self!
transpose_copy.int_out                                         out!
triangular_solve.X                                             X! M!
tril.out                                                       out!
tril_.default                                                  self!
tril_indices.out                                               out!
triu.out                                                       out!
triu_.default                                                  self!
triu_indices.out                                               out!
true_divide.out                                                out!
true_divide_.Scalar                                            self!
true_divide_.Tensor                                            self!
trunc.out                                                      out!
trunc_.default                                                 self!
unbind.int                                                     self
unflatten.int                                                  self
unfold.default                                                 self
unfold_backward.out                                            out!
unfold_copy.out                                                out!
uniform.out                                                    out!
uniform_.default                                               self!
unique_consecutive.out                                         out0! out1! out2!
unique_dim.out                                                 out0! out1! out2!
unique_dim_consecutive.out                                     out0! out1! out2!
unsqueeze.default                                              self
unsqueeze_.default                                             self!
unsqueeze_copy.out                                             out!
upsample_bicubic2d.out                                         out!
upsample_bicubic2d_backward.grad_input                         grad_input!
upsample_bilinear2d.out                                        out!
upsample_bilinear2d.vec_out                                    out!
upsample_bilinear2d_backward.grad_input                        grad_input!
upsample_linear1d.out                                          out!
upsample_linear1d_backward.grad_input                          grad_input!
upsample_nearest1d.out                                         out!
upsample_nearest1d_backward.grad_input                         grad_input!
upsample_nearest2d.out                                         out!
upsample_nearest2d.vec_out                                     out!
upsample_nearest2d_backward.grad_input                         grad_input!
upsample_nearest3d.out                                         out!
upsample_nearest3d_backward.grad_input                         grad_input!
upsample_trilinear3d.out                                       out!
upsample_trilinear3d_backward.grad_input                       grad_input!
values.default                                                 self
values_copy.out                                                out!
var.correction_out                                             out!
var.out                                                        out!
var_mean.correction_out                                        out0! out1!
vdot.out                                                       out!
view.default                                                   self
view.dtype                                                     self
view_as.default                                                self
view_as_complex.default                                        self
view_as_complex_copy.out                                       out!
view_as_real.default                                           self
view_as_real_copy.out                                          out!
view_copy.dtype_out                                            out!
view_copy.out                                                  out!
vsplit.array                                                   self
vsplit.int                                                     self
vstack.out                                                     out!
where.self_out                                                 out!
xlogy.OutScalar_Other                                          out!
xlogy.OutScalar_Self                                           out!
xlogy.OutTensor                                                out!
xlogy_.Scalar_Other                                            self!
xlogy_.Tensor                                                  self!
zero.out                                                       out!
zero_.default                                                  self!
zeros.out                                                      out!
zeros_like.out                                                 out!
"""


@dataclass(frozen=True)
class ResultAlias:
    """What one result of an op shares: the argument `argument` (None: a new tensor), whether
    the op writes it in place, and whether the alias is only possible (`maybe`)."""

    argument: str | None
    writes: bool = False
    maybe: bool = False


def _parse(text: str) -> dict[str, tuple[ResultAlias, ...]]:
    table = {}
    for line in text.strip().splitlines():
        op, *results = line.split()
        table[op] = tuple(ResultAlias(None) if r == "-" else
                          ResultAlias(r.rstrip("!?"), "!" in r, "?" in r) for r in results)
    return table


TABLE: dict[str, tuple[ResultAlias, ...]] = _parse(_TABLE_TEXT)

# Views ATen's schema does not mark: the argument is a fresh temporary, so nothing else sees it.
UNMARKED_VIEWS: dict[str, tuple[ResultAlias, ...]] = {
    "_unsafe_view.default": (ResultAlias("self"),),
}

# A view when the argument's strides allow one (ATen's `computeStride`), else a copy.
RESHAPES = frozenset({"reshape.default", "reshape_as.default", "flatten.using_ints",
                      "ravel.default"})

# The argument itself when its dtype, device, layout and strides already are what is asked for
# (and no `copy=True`), else a copy.
SAME_OR_COPY = frozenset({
    "contiguous.default", "to.device", "to.dtype", "to.dtype_layout", "to.other",
    "to.prim_Device", "to.prim_dtype", "to.prim_other", "cpu.default", "cuda.default",
    "as_tensor.default", "_autocast_to_full_precision.default",
    "_autocast_to_reduced_precision.default", "coalesce.default", "pin_memory.default",
    "resolve_conj.default", "resolve_neg.default",
})


def aten_overload(target: str) -> str | None:
    """`add_.Tensor` for the target `torch.ops.aten.add_.Tensor` (or `aten.add_.Tensor`); None
    for a target outside the aten namespace."""
    for prefix in ("torch.ops.aten.", "aten."):
        if target.startswith(prefix):
            return target[len(prefix):]
    return None


def result_aliases(target: str) -> tuple[ResultAlias, ...] | None:
    """Per result of the op `target`, what it aliases; None when every result is a new tensor
    (or the op is not ATen's, whose aliasing this table does not know)."""
    overload = aten_overload(target)
    if overload is None:
        return None
    return TABLE.get(overload) or UNMARKED_VIEWS.get(overload)

