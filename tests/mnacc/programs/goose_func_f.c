/* User functions marked `#pragma goose func` called from a marked loop, float:
   a smoothstep polynomial, a clamp built on fmaxf/fminf, and a helper that
   calls another marked helper; rows parallel, columns streamed. Exact
   (inputs are multiples of 1/8, polynomial of low degree). */
/* mnacc-test: exact */
#include <stdio.h>
#include <math.h>

#ifndef N
#define N 16
#endif
#ifndef M
#define M 16
#endif

float img[N][M], out[N][M];

#pragma goose func
float smoothstep3(float t)
{
    return t * t * (3.0f - 2.0f * t);
}

#pragma goose func
float clamp01(float v)
{
    return fminf(fmaxf(v, 0.0f), 1.0f);
}

#pragma goose func
float tone(float v, float gain)
{
    return smoothstep3(clamp01(v * gain));
}

int main(void)
{
    int i, j;
    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++)
            img[i][j] = (float)((i * 3 + j * 5) % 12) * 0.125f - 0.25f;

#pragma goose parallel for loopcounter(i, j) result(out[i][0..M-1])
    for (i = 0; i < N; i++) {
        float gain = (i % 2 == 0) ? 1.0f : 0.5f;
        for (j = 0; j < M; j++)
            out[i][j] = tone(img[i][j], gain);
    }

    for (i = 0; i < N; i++)
        for (j = 0; j < M; j++)
            printf("%.9g\n", (double)out[i][j]);
    return 0;
}
