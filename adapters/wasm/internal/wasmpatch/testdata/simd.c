/*
 * simd.wasm, the module TestPatchClangSIMDModule patches, is this file as
 * clang 19 compiles it with fixed-width SIMD, without libc:
 *
 *   clang-19 --target=wasm32-wasi -msimd128 -O2 -nostdlib \
 *     -Wl,--no-entry -Wl,--strip-all -o simd.wasm simd.c
 *
 * The loops are vectorised by clang; intrinsics() uses the instructions
 * with immediates (shuffle, lanes, v128.const, load/store_lane) that
 * plain C seldom makes it emit. Rebuild it only with the command above:
 * the test compares the patched module with this one.
 */
#include <wasm_simd128.h>

static float xs[1024], ys[1024];
static unsigned char bytes[4096];

__attribute__((export_name("fill"))) void fill(int n) {
	for (int i = 0; i < 1024; i++) {
		xs[i] = (float)((i * 7 + n) % 101) * 0.25f;
		ys[i] = (float)((i * 13 + n) % 37) - 18.0f;
	}
	for (int i = 0; i < 4096; i++)
		bytes[i] = (unsigned char)(i * 31 + n);
}

/* autovectorised at -O2 with -msimd128 */
__attribute__((export_name("saxpy_sum"))) float saxpy_sum(float a, int n) {
	float s = 0;
	for (int i = 0; i < n; i++) {
		ys[i] = a * xs[i] + ys[i];
	}
	for (int i = 0; i < n; i++)
		s += ys[i] * ys[i];
	return s;
}

__attribute__((export_name("byte_hist"))) unsigned byte_hist(int n) {
	unsigned acc = 0;
	for (int i = 0; i < n; i++)
		acc += bytes[i] > 100 ? bytes[i] : 0;
	return acc;
}

/* explicit intrinsics: shuffle, lanes, const, load/store lane */
__attribute__((export_name("intrinsics"))) unsigned long long intrinsics(int k) {
	v128_t a = wasm_i32x4_make(k, k + 1, k * 2, k ^ 5);
	v128_t b = wasm_i32x4_const(3, 1, 4, 1);
	v128_t c = wasm_i8x16_shuffle(a, b, 0, 17, 2, 19, 4, 21, 6, 23, 8, 25, 10, 27, 12, 29, 14, 31);
	c = wasm_i32x4_replace_lane(c, 2, k * 11);
	c = wasm_v128_load32_lane(&xs[k & 1023], c, 1);
	wasm_v128_store64_lane(&ys[(k + 8) & 1015], c, 1);
	v128_t d = wasm_i16x8_add_sat(c, wasm_i16x8_splat((short)k));
	unsigned long long r = (unsigned long long)wasm_i64x2_extract_lane(d, 0) ^ (unsigned)wasm_i8x16_bitmask(d);
	return r + (unsigned)wasm_i32x4_extract_lane(d, 3) + (unsigned)wasm_v128_any_true(d);
}
