/* a function body after a declarator without a parameter list: was an internal compiler error */
float vfloat
{
  return 1.0f;
}
__kernel void k(__global float *a) { a[0] = 2.0f; }
