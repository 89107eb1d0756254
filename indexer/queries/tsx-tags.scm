; inherits: typescript
; TSX is TypeScript plus JSX, which declares nothing.

; A component used in JSX is called.
(jsx_opening_element name: (identifier) @name.reference.call)
(jsx_self_closing_element name: (identifier) @name.reference.call)
