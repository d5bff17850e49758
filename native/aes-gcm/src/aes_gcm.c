/*
 * aes-gcm: AES-256-GCM for the volume actor's slice chunks (actors/volume/chunk-cipher.ts), in
 * place: the ciphertext or plaintext goes into a buffer the caller gives (an O_DIRECT stage, a
 * read reply), through one OpenSSL cipher context reused chunk after chunk. node:crypto's Cipher
 * returns a fresh Buffer for every update, and on the volume threads those allocations cost about
 * as much as the cipher itself (V8 counts them as external memory and collects garbage for them);
 * docs/object-store.md, "What it costs, measured".
 *
 * It is the same OpenSSL that node:crypto runs: node exports its libcrypto's symbols, and
 * node-gyp compiles against node's own copy of the headers. No key derivation, nonce or AAD
 * rule lives here: the caller passes the slice key, the 12-byte nonce and the AAD
 * (protocols/objstore/crypto-format.ts is their one home).
 *
 *   ctx = createContext()                  one EVP_CIPHER_CTX, freed when ctx is collected
 *   begin(ctx, encrypt, key32, iv12, aad)  a new chunk
 *   update(ctx, src, dst)                  src.length bytes of src ciphered into dst (dst may be src)
 *   sealEnd(ctx, tag16)                    the chunk's tag written into tag16
 *   openEnd(ctx, tag16) -> boolean         whether the chunk's tag verifies
 */
#include <node_api.h>
#include <openssl/evp.h>
#include <limits.h>

static void ctx_free(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  EVP_CIPHER_CTX_free((EVP_CIPHER_CTX *)data);
}

/* The bytes of a Uint8Array (any offset and length), or 0 with a TypeError thrown. */
static int u8(napi_env env, napi_value v, const char *what, uint8_t **p, size_t *n) {
  bool is = false;
  napi_typedarray_type type;
  napi_value ab;
  size_t off;
  void *data = NULL;
  if (napi_is_typedarray(env, v, &is) != napi_ok || !is || napi_get_typedarray_info(env, v, &type, n, &data, &ab, &off) != napi_ok || type != napi_uint8_array) {
    char msg[96];
    snprintf(msg, sizeof msg, "aes-gcm: %s must be a Uint8Array", what);
    napi_throw_type_error(env, NULL, msg);
    return 0;
  }
  *p = data;
  return 1;
}

static int sized(napi_env env, napi_value v, const char *what, size_t want, uint8_t **p) {
  size_t n = 0;
  if (!u8(env, v, what, p, &n)) return 0;
  if (n != want) {
    char msg[96];
    snprintf(msg, sizeof msg, "aes-gcm: %s must be %zu bytes, got %zu", what, want, n);
    napi_throw_range_error(env, NULL, msg);
    return 0;
  }
  return 1;
}

static int args(napi_env env, napi_callback_info info, size_t want, napi_value *argv, EVP_CIPHER_CTX **ctx) {
  size_t argc = want;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < want) {
    napi_throw_type_error(env, NULL, "aes-gcm: too few arguments");
    return 0;
  }
  void *p = NULL;
  napi_valuetype t;
  if (napi_typeof(env, argv[0], &t) != napi_ok || t != napi_external || napi_get_value_external(env, argv[0], &p) != napi_ok || !p) {
    napi_throw_type_error(env, NULL, "aes-gcm: the first argument must be a context from createContext()");
    return 0;
  }
  *ctx = p;
  return 1;
}

static napi_value failed(napi_env env, const char *what) {
  napi_throw_error(env, NULL, what);
  return NULL;
}

static napi_value create_context(napi_env env, napi_callback_info info) {
  (void)info;
  EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
  if (!c) return failed(env, "aes-gcm: EVP_CIPHER_CTX_new failed");
  napi_value r;
  if (napi_create_external(env, c, ctx_free, NULL, &r) != napi_ok) {
    EVP_CIPHER_CTX_free(c);
    return failed(env, "aes-gcm: cannot make the context object");
  }
  return r;
}

static napi_value begin(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  EVP_CIPHER_CTX *c;
  if (!args(env, info, 5, argv, &c)) return NULL;
  bool enc = false;
  if (napi_get_value_bool(env, argv[1], &enc) != napi_ok) {
    napi_throw_type_error(env, NULL, "aes-gcm: encrypt must be a boolean");
    return NULL;
  }
  uint8_t *key, *iv, *aad;
  size_t aad_len = 0;
  if (!sized(env, argv[2], "key", 32, &key) || !sized(env, argv[3], "iv", 12, &iv) || !u8(env, argv[4], "aad", &aad, &aad_len)) return NULL;
  if (aad_len > INT_MAX) return failed(env, "aes-gcm: aad too long");
  int len = 0;
  if (EVP_CipherInit_ex(c, EVP_aes_256_gcm(), NULL, key, iv, enc ? 1 : 0) != 1) return failed(env, "aes-gcm: EVP_CipherInit_ex failed");
  if (aad_len && EVP_CipherUpdate(c, NULL, &len, aad, (int)aad_len) != 1) return failed(env, "aes-gcm: the AAD was refused");
  return NULL;
}

static napi_value update(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  EVP_CIPHER_CTX *c;
  if (!args(env, info, 3, argv, &c)) return NULL;
  uint8_t *src, *dst;
  size_t src_len = 0, dst_len = 0;
  if (!u8(env, argv[1], "src", &src, &src_len) || !u8(env, argv[2], "dst", &dst, &dst_len)) return NULL;
  if (dst_len < src_len) {
    napi_throw_range_error(env, NULL, "aes-gcm: dst is shorter than src");
    return NULL;
  }
  if (src_len > INT_MAX) return failed(env, "aes-gcm: src too long");
  int len = 0;
  if (src_len && (EVP_CipherUpdate(c, dst, &len, src, (int)src_len) != 1 || (size_t)len != src_len)) return failed(env, "aes-gcm: EVP_CipherUpdate failed");
  return NULL;
}

static napi_value seal_end(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  EVP_CIPHER_CTX *c;
  uint8_t *tag, rest[16];
  int len = 0;
  if (!args(env, info, 2, argv, &c) || !sized(env, argv[1], "tag", 16, &tag)) return NULL;
  if (EVP_CipherFinal_ex(c, rest, &len) != 1 || EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, tag) != 1) return failed(env, "aes-gcm: sealing the chunk failed");
  return NULL;
}

static napi_value open_end(napi_env env, napi_callback_info info) {
  napi_value argv[2], r;
  EVP_CIPHER_CTX *c;
  uint8_t *tag, rest[16];
  int len = 0;
  if (!args(env, info, 2, argv, &c) || !sized(env, argv[1], "tag", 16, &tag)) return NULL;
  int ok = EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, 16, tag) == 1 && EVP_CipherFinal_ex(c, rest, &len) == 1;
  napi_get_boolean(env, ok, &r);
  return r;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
      {"createContext", NULL, create_context, NULL, NULL, NULL, napi_default, NULL},
      {"begin", NULL, begin, NULL, NULL, NULL, napi_default, NULL},
      {"update", NULL, update, NULL, NULL, NULL, napi_default, NULL},
      {"sealEnd", NULL, seal_end, NULL, NULL, NULL, napi_default, NULL},
      {"openEnd", NULL, open_end, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}
