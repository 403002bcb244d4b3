"""Node tests expected to fail, each with its reason (reviewed; the runner xfails them strictly).

`IMPORT_FAILURES`: `from_onnx` rejects the model, or its result struct info is wrong.
`NUMERIC_FAILURES`: imports fine, but the compiled module cannot run it or disagrees with
the expected outputs.  `GPU_FAILURES`: runs on the CPU but not compiled for cuda in the
GPU emulator.  A test that starts passing must be removed from its list.

Regenerate the candidates with ``python tests/relax/frontend/onnx_node_runner.py [--numeric]``
and review every reason before committing.
"""

IMPORT_FAILURES: dict[str, str] = {
    'test_adagrad': 'training-only optimizer op (ai.onnx.preview.training)',
    'test_adagrad_multiple': 'training-only optimizer op (ai.onnx.preview.training)',
    'test_adam': 'training-only optimizer op (ai.onnx.preview.training)',
    'test_adam_multiple': 'training-only optimizer op (ai.onnx.preview.training)',
    'test_ai_onnx_ml_array_feature_extractor': 'ai.onnx.ml (classical ML) ops are out of scope',
    'test_ai_onnx_ml_binarizer': 'ai.onnx.ml (classical ML) ops are out of scope',
    'test_ai_onnx_ml_label_encoder_string_int': 'ai.onnx.ml (classical ML) ops are out of scope',
    'test_ai_onnx_ml_label_encoder_string_int_no_default': 'ai.onnx.ml (classical ML) ops are out of scope',
    'test_ai_onnx_ml_label_encoder_tensor_mapping': 'ai.onnx.ml (classical ML) ops are out of scope',
    'test_ai_onnx_ml_label_encoder_tensor_value_only_mapping': 'ai.onnx.ml (classical ML) ops are out of scope',
    'test_ai_onnx_ml_tree_ensemble_set_membership': 'ai.onnx.ml (classical ML) ops are out of scope',
    'test_ai_onnx_ml_tree_ensemble_single_tree': 'ai.onnx.ml (classical ML) ops are out of scope',
    'test_batchnorm_epsilon_training_mode': 'BatchNormalization in training mode (inference only)',
    'test_batchnorm_example_training_mode': 'BatchNormalization in training mode (inference only)',
    'test_bernoulli': 'random output (not reproducible)',
    'test_bernoulli_double': 'random output (not reproducible)',
    'test_bernoulli_double_expanded': 'random output (not reproducible)',
    'test_bernoulli_expanded': 'random output (not reproducible)',
    'test_bernoulli_seed': 'random output (not reproducible)',
    'test_bernoulli_seed_expanded': 'random output (not reproducible)',
    'test_equal_string': 'string tensors are not supported',
    'test_equal_string_broadcast': 'string tensors are not supported',
    'test_identity_opt': 'an optional sequence graph input (sequence graph inputs are not supported)',
    'test_identity_sequence': 'sequence graph inputs are not supported',
    'test_if_opt': 'optional types are not supported (an If whose branches make optionals)',
    'test_if_seq': 'sequence types are not supported (an If whose branches make sequences)',
    'test_image_decoder_decode_bmp_rgb': 'image decoding is out of scope',
    'test_image_decoder_decode_jpeg2k_rgb': 'image decoding is out of scope',
    'test_image_decoder_decode_jpeg_bgr': 'image decoding is out of scope',
    'test_image_decoder_decode_jpeg_grayscale': 'image decoding is out of scope',
    'test_image_decoder_decode_jpeg_rgb': 'image decoding is out of scope',
    'test_image_decoder_decode_png_rgb': 'image decoding is out of scope',
    'test_image_decoder_decode_pnm_rgb': 'image decoding is out of scope',
    'test_image_decoder_decode_tiff_rgb': 'image decoding is out of scope',
    'test_image_decoder_decode_webp_rgb': 'image decoding is out of scope',
    'test_loop13_seq': 'sequence types are not supported (a Loop carrying a sequence)',
    'test_loop16_seq_none': 'sequence and optional types are not supported (a Loop carrying them)',
    'test_momentum': 'training-only optimizer op (ai.onnx.preview.training)',
    'test_momentum_multiple': 'training-only optimizer op (ai.onnx.preview.training)',
    'test_nesterov_momentum': 'training-only optimizer op (ai.onnx.preview.training)',
    'test_optional_get_element_optional_sequence': 'sequence graph inputs are not supported',
    'test_optional_get_element_sequence': 'sequence graph inputs are not supported',
    'test_regex_full_match_basic': 'string tensors are not supported',
    'test_regex_full_match_email_domain': 'string tensors are not supported',
    'test_regex_full_match_empty': 'string tensors are not supported',
    'test_scan_sum': "Scan's opset-8 form (batched, with sequence_lens) is not supported",
    'test_sequence_insert_at_back': 'sequence graph inputs are not supported',
    'test_sequence_insert_at_front': 'sequence graph inputs are not supported',
    'test_sequence_map_add_1_sequence_1_tensor': 'sequence graph inputs are not supported',
    'test_sequence_map_add_1_sequence_1_tensor_expanded': 'sequence graph inputs are not supported',
    'test_sequence_map_add_2_sequences': 'sequence graph inputs are not supported',
    'test_sequence_map_add_2_sequences_expanded': 'sequence graph inputs are not supported',
    'test_sequence_map_extract_shapes': 'sequence graph inputs are not supported',
    'test_sequence_map_extract_shapes_expanded': 'sequence graph inputs are not supported',
    'test_sequence_map_identity_1_sequence': 'sequence graph inputs are not supported',
    'test_sequence_map_identity_1_sequence_1_tensor': 'sequence graph inputs are not supported',
    'test_sequence_map_identity_1_sequence_1_tensor_expanded': 'sequence graph inputs are not supported',
    'test_sequence_map_identity_1_sequence_expanded': 'sequence graph inputs are not supported',
    'test_sequence_map_identity_2_sequences': 'sequence graph inputs are not supported',
    'test_sequence_map_identity_2_sequences_expanded': 'sequence graph inputs are not supported',
    'test_string_concat': 'string tensors are not supported',
    'test_string_concat_broadcasting': 'string tensors are not supported',
    'test_string_concat_empty_string': 'string tensors are not supported',
    'test_string_concat_utf8': 'string tensors are not supported',
    'test_string_concat_zero_dimensional': 'string tensors are not supported',
    'test_string_split_basic': 'string tensors are not supported',
    'test_string_split_consecutive_delimiters': 'string tensors are not supported',
    'test_string_split_empty_string_delimiter': 'string tensors are not supported',
    'test_string_split_empty_tensor': 'string tensors are not supported',
    'test_string_split_maxsplit': 'string tensors are not supported',
    'test_string_split_no_delimiter': 'string tensors are not supported',
    'test_strnormalizer_export_monday_casesensintive_lower': 'string tensors are not supported',
    'test_strnormalizer_export_monday_casesensintive_nochangecase': 'string tensors are not supported',
    'test_strnormalizer_export_monday_casesensintive_upper': 'string tensors are not supported',
    'test_strnormalizer_export_monday_empty_output': 'string tensors are not supported',
    'test_strnormalizer_export_monday_insensintive_upper_twodim': 'string tensors are not supported',
    'test_strnormalizer_nostopwords_nochangecase': 'string tensors are not supported',
    'test_training_dropout': 'random output (not reproducible)',
    'test_training_dropout_default': 'random output (not reproducible)',
    'test_training_dropout_default_mask': 'random output (not reproducible)',
    'test_training_dropout_mask': 'random output (not reproducible)',
    'test_training_dropout_zero_ratio': 'random output (not reproducible)',
    'test_training_dropout_zero_ratio_mask': 'random output (not reproducible)',
}

NUMERIC_FAILURES: dict[str, str] = {
    'test_optional_has_element_empty_optional_input': 'an empty optional graph input (optional inputs are taken to hold a tensor)',
}


GPU_FAILURES: dict[str, str] = {}
"""Cases that run on the CPU but not compiled for cuda in the GPU emulator."""
