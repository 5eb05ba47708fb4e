resource "terraform_data" "this" {
  input = "addon"
}

output "id" {
  value = terraform_data.this.id
}
