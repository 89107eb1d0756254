; Ruby symbols and requires. `def` inside a class is a method, inside a module or at
; the top level a function; `def self.x` likewise.

(class
  name: [(constant) (scope_resolution)] @name.definition.class) @definition.class

(module
  name: [(constant) (scope_resolution)] @name.definition.module) @definition.module

(method
  name: (_) @name.definition.function) @definition.function

(singleton_method
  name: (_) @name.definition.function) @definition.function

(assignment
  left: (constant) @name.definition.constant) @definition.constant

; require "json"   /   require_relative "lib/x"
(call
  method: (identifier) @_require
  arguments: (argument_list . (string (string_content) @import.module))
  (#any-of? @_require "require" "require_relative")) @import

; References.
(call !receiver method: (identifier) @name.reference.call)
(call receiver: (_) @reference.qualifier method: (identifier) @name.reference.call)
(call receiver: (constant) @name.reference.type)
(superclass (constant) @name.reference.type)
(scope_resolution name: (constant) @name.reference.type)
