/* nip_pack and precision("single") are accepted with a remark each. mnacc-diag: run -o /dev/null */
#include <stdio.h>
float x[8];
int main(void) {
    int i;
#pragma goose parallel for loopcounter(i) result(x[i]) nip_pack(4) precision("single")
    for (i = 0; i < 8; i++) x[i] = i * 0.5f;
    printf("%g\n", x[7]);
    return 0;
}
