; inherits: typescript
; TSX is TypeScript plus JSX, which declares nothing.
