/* SHOC md5hash shape: every work-item builds a short message from its index and hashes it with the
   64 MD5 steps, left-rotating with rotate() in the round function.  The message is the 16 bytes
   of four little-endian words (gid, gid * 0x9e3779b9, gid ^ salt, salt), padded as MD5 pads a
   16-byte message: a 0x80 byte, zeros, and the bit length 128 in word 14. */
__constant uint K[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};

__constant uint SHIFT[16] = {7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21};

__kernel void md5_of_index(__global uint *digest, uint salt, int n)
{
    int gid = get_global_id(0);
    if (gid >= n)
        return;
    uint m[16];
    for (int k = 0; k < 16; k++)
        m[k] = 0;
    m[0] = (uint)gid;
    m[1] = (uint)gid * 0x9e3779b9u;
    m[2] = (uint)gid ^ salt;
    m[3] = salt;
    m[4] = 0x80;
    m[14] = 128;

    uint a = 0x67452301, b = 0xefcdab89, c = 0x98badcfe, d = 0x10325476;
    for (int step = 0; step < 64; step++) {
        uint f;
        int word;
        int round = step >> 4;
        if (round == 0) {
            f = (b & c) | (~b & d);
            word = step;
        } else if (round == 1) {
            f = (d & b) | (~d & c);
            word = (5 * step + 1) & 15;
        } else if (round == 2) {
            f = b ^ c ^ d;
            word = (3 * step + 5) & 15;
        } else {
            f = c ^ (b | ~d);
            word = (7 * step) & 15;
        }
        uint rotated = rotate(a + f + K[step] + m[word], SHIFT[(round << 2) | (step & 3)]);
        a = d;
        d = c;
        c = b;
        b = b + rotated;
    }
    digest[4 * gid + 0] = 0x67452301 + a;
    digest[4 * gid + 1] = 0xefcdab89 + b;
    digest[4 * gid + 2] = 0x98badcfe + c;
    digest[4 * gid + 3] = 0x10325476 + d;
}
