/**
 * Constant tables of ITU-T G.722 (sub-band ADPCM), as printed in the Recommendation and used by
 * its reference implementation. Names follow the ITU block names (QUANTL, INVQAL, LOGSCL...).
 */

/** QUANTL decision levels (×det >> 12), index 1..29. */
export const Q6 = Int16Array.of(
  0, 35, 72, 110, 150, 190, 233, 276, 323, 370, 422, 473, 530, 587, 650, 714,
  786, 858, 940, 1023, 1121, 1219, 1339, 1458, 1612, 1765, 1980, 2195, 2557, 2919, 0, 0,
);

/** QUANTL output code for a negative / positive difference, by decision interval. */
export const ILN = Int16Array.of(
  0, 63, 62, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19,
  18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 0,
);
export const ILP = Int16Array.of(
  0, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47,
  46, 45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 0,
);

/** LOGSCL: log scale-factor increments, indexed through RL42. */
export const WL = Int16Array.of(-60, -30, 58, 172, 334, 538, 1198, 3042);
export const RL42 = Int16Array.of(0, 7, 6, 5, 4, 3, 2, 1, 7, 6, 5, 4, 3, 2, 1, 0);

/** SCALEL/SCALEH: antilog table. */
export const ILB = Int16Array.of(
  2048, 2093, 2139, 2186, 2233, 2282, 2332, 2383, 2435, 2489, 2543, 2599, 2656, 2714, 2774, 2834,
  2896, 2960, 3025, 3091, 3158, 3228, 3298, 3371, 3444, 3520, 3597, 3676, 3756, 3838, 3922, 4008,
);

/** INVQAL: 4-bit inverse quantiser (the predictor adapts on the 4 MSBs of the low-band code). */
export const QM4 = Int16Array.of(
  0, -20456, -12896, -8968, -6288, -4240, -2584, -1200,
  20456, 12896, 8968, 6288, 4240, 2584, 1200, 0,
);

/** INVQBL in the 64 kbit/s mode: 6-bit inverse quantiser. */
export const QM6 = Int16Array.of(
  -136, -136, -136, -136, -24808, -21904, -19008, -16704,
  -14984, -13512, -12280, -11192, -10232, -9360, -8576, -7856,
  -7192, -6576, -6000, -5456, -4944, -4464, -4008, -3576,
  -3168, -2776, -2400, -2032, -1688, -1360, -1040, -728,
  24808, 21904, 19008, 16704, 14984, 13512, 12280, 11192,
  10232, 9360, 8576, 7856, 7192, 6576, 6000, 5456,
  4944, 4464, 4008, 3576, 3168, 2776, 2400, 2032,
  1688, 1360, 1040, 728, 432, 136, -432, -136,
);

/** High band: QUANTH codes, INVQAH, LOGSCH. */
export const IHN = Int16Array.of(0, 1, 0);
export const IHP = Int16Array.of(0, 3, 2);
export const QM2 = Int16Array.of(-7408, -1616, 7408, 1616);
export const WH = Int16Array.of(0, -214, 798);
export const RH2 = Int16Array.of(2, 1, 2, 1);

/**
 * QMF coefficients h(0), h(2), ..., h(22) of the 24-tap quadrature mirror filter; the odd taps
 * are the same values reversed (h is symmetric).
 */
export const QMF = Int16Array.of(3, -11, 12, 32, -210, 951, 3876, -805, 362, -156, 53, -11);
