// Package textclip shortens text that a message quotes back (an id, a
// client's value, a model's arguments) to a bound, on a character
// boundary: a hostile input must neither make an error message as long
// as itself nor leave half a character in it.
//
//	msg := fmt.Sprintf("no session %q", textclip.Clip(id, 64))
package textclip
